package dev.trellis.runtime.timeline

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.timeline.TimelineMark.Kind
import dev.trellis.runtime.toMermaid
import java.time.Instant

/** Builds a [RunTimeline] from a run's events (and its result, when the caller has it apart). */
internal object EventTimeline {
    private class Open(val nodeId: String, val execution: Int, val start: Instant) {
        var end: Instant? = null
        var status: Status = Status.EXECUTING
        var attempts = 0
        var error: String? = null
    }

    fun build(graph: Graph, given: RunResult?, events: List<RunEvent>): RunTimeline {
        require(events.isNotEmpty()) {
            "A timeline needs the run's events, but the list is empty; collect them from graph.events(...)."
        }
        val result = given ?: events.filterIsInstance<RunEvent.Terminal>().lastOrNull()?.result
        val runId = events.first().runId
        val open = LinkedHashMap<Pair<String, Int>, Open>()
        val marks = ArrayList<TimelineMark>()
        val executions = HashMap<String, Int>()
        val attempts = HashMap<String, Int>()
        val lastStatus = HashMap<String, Status>()
        var input: State? = null
        for (event in events) {
            when (event) {
                is RunEvent.RunStarted -> input = event.input
                is RunEvent.NodeStarted -> {
                    open[event.nodeId to event.execution] = Open(event.nodeId, event.execution, event.timestamp)
                    executions.merge(event.nodeId, 1, Int::plus)
                    lastStatus[event.nodeId] = Status.EXECUTING
                }
                is RunEvent.NodeRetrying -> marks += TimelineMark(
                    Kind.RETRY,
                    event.timestamp,
                    event.nodeId,
                    event.execution,
                    "attempt ${event.attempt} failed: ${event.error}; retry in ${event.delay.toMillis()} ms",
                )
                is RunEvent.Custom -> marks += TimelineMark(
                    Kind.CUSTOM,
                    event.timestamp,
                    event.nodeId,
                    event.execution,
                    event.payload.toString(),
                )
                is RunEvent.NodeCompleted -> close(open, event, Status.COMPLETED, event.attempts, null)
                is RunEvent.NodeFailed -> {
                    close(open, event, Status.FAILED, event.attempts, event.error.toString())
                    marks +=
                        TimelineMark(
                            Kind.FAILURE,
                            event.timestamp,
                            event.nodeId,
                            event.execution,
                            event.error.toString(),
                        )
                }
                is RunEvent.NodeCancelled -> close(open, event, Status.CANCELLED, 0, null)
                is RunEvent.CheckpointSaved -> marks += TimelineMark(
                    Kind.CHECKPOINT,
                    event.timestamp,
                    null,
                    0,
                    "checkpoint ${event.checkpoint} (${if (event.full) "full" else "delta"})",
                )
                is RunEvent.NodeCompensationFailed -> marks += TimelineMark(
                    Kind.FAILURE,
                    event.timestamp,
                    event.nodeId,
                    event.execution,
                    "compensation failed: ${event.error}",
                )
                is RunEvent.NodeCompensating, is RunEvent.NodeCompensated -> Unit
                is RunEvent.EdgeTaken, is RunEvent.MetersCharged, is RunEvent.Terminal -> Unit
                is RunEvent.NodeCacheHit, is RunEvent.NodeCacheStored -> Unit
            }
            if (event is RunEvent.NodeEvent && event !is RunEvent.Custom && event !is RunEvent.NodeRetrying &&
                event !is RunEvent.MetersCharged
            ) {
                open[event.nodeId to event.execution]?.let { lastStatus[event.nodeId] = it.status }
            }
        }
        // An interrupted execution is reported as cancelled; the result names the interrupting nodes.
        val interrupted = result?.interrupts.orEmpty()
        for (interrupt in interrupted) {
            val last =
                open.values.lastOrNull { it.nodeId == interrupt.nodeId && it.status == Status.CANCELLED } ?: continue
            last.status = Status.INTERRUPTED
            lastStatus[interrupt.nodeId] = Status.INTERRUPTED
            marks += TimelineMark(Kind.INTERRUPT, last.end!!, last.nodeId, last.execution, interrupt.payload)
        }
        val started = events.first().timestamp
        val ended = events.last().timestamp
        val list = open.values.toList()
        val ends = list.map { it.end ?: ended }
        val lanes = assignLanes(list.map { it.start }, ends)
        val bars = list.mapIndexed { i, o ->
            TimelineBar(o.nodeId, o.execution, o.start, ends[i], o.status, o.attempts, lanes[i], o.error)
        }
        for (o in list) attempts.merge(o.nodeId, o.attempts, Int::plus)
        val nodes = graph.nodes.map { node ->
            val fromResult = result?.nodes?.get(node.id)
            TimelineNode(
                node.id,
                lastStatus[node.id] ?: fromResult?.status ?: Status.PENDING,
                executions[node.id] ?: fromResult?.executions ?: 0,
                attempts[node.id] ?: fromResult?.attempts ?: 0,
            )
        }
        val status = result?.status ?: Status.EXECUTING
        val state = result?.state ?: input
        return RunTimeline(
            graph.id,
            runId,
            status,
            started,
            ended,
            bars,
            marks.sortedBy { it.at },
            nodes,
            state?.let(::describe).orEmpty(),
            graph.toMermaid(nodes),
            approximate = false,
            errors = result?.errors.orEmpty().map { it.toString() },
            graph = graph,
        )
    }

    private fun close(
        open: Map<Pair<String, Int>, Open>,
        event: RunEvent.NodeEvent,
        status: Status,
        attempts: Int,
        error: String?,
    ) {
        val o = open[event.nodeId to event.execution] ?: return
        o.end = event.timestamp
        o.status = status
        o.attempts = attempts
        o.error = error
    }
}

/** The set keys of [state], in schema order, as text (long values cut). */
internal fun describe(state: State): Map<String, String> {
    val out = LinkedHashMap<String, String>()
    for (key in state.schema.keys) {
        val value = state.getOrUnset(key)
        if (value === State.Unset) continue
        val text = value.toString()
        out[key.name] = if (text.length > 2_000) text.take(2_000) + "… (${text.length} chars)" else text
    }
    return out
}
