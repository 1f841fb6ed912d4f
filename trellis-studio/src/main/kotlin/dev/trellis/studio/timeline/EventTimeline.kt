package dev.trellis.studio.timeline

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.studio.timeline.TimelineMark.Kind
import java.time.Instant

/**
 * Builds a [RunTimeline] from a run's events (and its result, when the caller has it apart). Executions are told
 * apart by path and number, so each map task and each child run keeps its own bars (`research[2]/search#1` is not
 * `research[3]/search#1`), and the graph's counts are those of the run's own nodes.
 */
internal object EventTimeline {
    private class Open(val nodeId: String, val path: String, val execution: Int, val start: Instant) {
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
        var input: State? = null
        for (event in events) {
            if (event is RunEvent.RunStarted) input = event.input
            if (event is RunEvent.CheckpointSaved) {
                marks += TimelineMark(
                    Kind.CHECKPOINT,
                    event.timestamp,
                    null,
                    0,
                    "checkpoint ${event.checkpoint} (${if (event.full) "full" else "delta"})",
                    null,
                )
            }
            if (event !is RunEvent.NodeEvent) continue
            // A map task's own execution (`research[2]`): its row shows it, through its nodes' bars; a bar of its own
            // would sit among the run's, one more `research #1` per task (as the checkpoints of a run never show).
            if (event.path.endsWith(']')) continue
            val key = event.path to event.execution

            fun mark(kind: Kind, label: String) {
                marks += TimelineMark(kind, event.timestamp, event.nodeId, event.execution, label, event.path)
            }
            when (event) {
                is RunEvent.NodeStarted -> open[key] = Open(event.nodeId, event.path, event.execution, event.timestamp)
                is RunEvent.NodeRetrying -> mark(
                    Kind.RETRY,
                    "attempt ${event.attempt} failed: ${event.error}; retry in ${event.delay.toMillis()} ms",
                )
                is RunEvent.Custom -> mark(Kind.CUSTOM, event.payload.toString())
                is RunEvent.NodeCompleted -> close(open[key], event, Status.COMPLETED, event.attempts, null)
                is RunEvent.NodeFailed -> {
                    close(open[key], event, Status.FAILED, event.attempts, event.error.toString())
                    mark(Kind.FAILURE, event.error.toString())
                }
                is RunEvent.NodeCancelled -> close(open[key], event, Status.CANCELLED, 0, null)
                is RunEvent.MetersCharged -> mark(Kind.BUDGET, "charged ${event.charges}, totals ${event.totals}")
                is RunEvent.NodeCompensating -> mark(Kind.COMPENSATION, "compensating")
                is RunEvent.NodeCompensated -> mark(Kind.COMPENSATION, "compensated in ${event.duration.toMillis()} ms")
                is RunEvent.NodeCompensationFailed -> mark(Kind.FAILURE, "compensation failed: ${event.error}")
                is RunEvent.NodeCacheHit -> mark(Kind.CUSTOM, "cache hit ${event.key}")
                is RunEvent.NodeCacheStored -> Unit
            }
        }
        // An interrupted execution is reported as cancelled; the result names the interrupting paths.
        for (interrupt in result?.interrupts.orEmpty()) {
            val last = open.values.lastOrNull { it.path == interrupt.path && it.status == Status.CANCELLED } ?: continue
            last.status = Status.INTERRUPTED
            marks += TimelineMark(Kind.INTERRUPT, last.end!!, last.nodeId, last.execution, interrupt.payload, last.path)
        }
        val started = events.first().timestamp
        val ended = events.last().timestamp
        val list = open.values.toList()
        val ends = list.map { it.end ?: ended }
        val lanes = assignLanes(list.map { it.path.substringBeforeLast('/', "") }, list.map { it.start }, ends)
        val bars = list.mapIndexed { i, o ->
            TimelineBar(o.nodeId, o.path, o.execution, o.start, ends[i], o.status, o.attempts, lanes[i], o.error)
        }
        val nodes = graph.nodes.map { node ->
            val own = list.filter { it.path == node.id }
            val fromResult = result?.nodes?.get(node.id)
            TimelineNode(
                node.id,
                own.lastOrNull()?.status ?: fromResult?.status ?: Status.PENDING,
                own.size.takeIf { it > 0 } ?: fromResult?.executions ?: 0,
                own.sumOf { it.attempts }.takeIf { it > 0 } ?: fromResult?.attempts ?: 0,
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
            statusMermaid(graph, nodes),
            approximate = false,
            errors = result?.errors.orEmpty().map { it.toString() },
            graph = graph,
        )
    }

    private fun close(o: Open?, event: RunEvent.NodeEvent, status: Status, attempts: Int, error: String?) {
        if (o == null) return
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
        out[key.name] = fold(value.toString())
    }
    return out
}

/** [text], cut to 2,000 characters with its length told when longer. */
internal fun fold(text: String): String = if (text.length >
    2_000
) {
    text.take(2_000) + "… (${text.length} chars)"
} else {
    text
}
