package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestScope

/**
 * The pairing rules of `docs/semantics.md` §8, checked on a recorded event stream.
 *
 * [complete] is false when the collector stopped collecting before the run ended: then the stream may
 * lack its terminal event and the ends of executions still running.
 */
object EventInvariants {
    fun check(events: List<RunEvent>, complete: Boolean = true) {
        try {
            checkRules(events, complete)
        } catch (e: Throwable) {
            throw AssertionError("${e.message}\nin events:\n" + events.joinToString("\n"), e)
        }
    }

    private fun checkRules(events: List<RunEvent>, complete: Boolean) {
        check(events.isNotEmpty()) { "no events" }
        events.map { it.sequence } shouldBe events.indices.map { it.toLong() }
        events.map { it.runId }.distinct() shouldBe listOf(events[0].runId)
        events[0].shouldBeInstanceOf<RunEvent.RunStarted>()
        events.count { it is RunEvent.RunStarted } shouldBe 1
        val terminals = events.indices.filter { isTerminal(events[it]) }
        for (event in events) {
            check(
                event.isTerminal == (isTerminal(event) || event is RunEvent.RunInterrupted),
            ) { "isTerminal of $event" }
            if (event.isTerminal) (event as RunEvent.Terminal).result.runId shouldBe event.runId
            if (event is RunEvent.NodeEvent) check(event.execution >= 1) { "execution number of $event" }
        }
        if (complete) terminals shouldBe listOf(events.lastIndex)
        if (!complete) {
            check(terminals.isEmpty() || terminals == listOf(events.lastIndex)) {
                "terminal event not last: $terminals"
            }
        }

        val open = HashSet<String>() // nodes with an open execution
        val openExecution = HashMap<String, Int>()
        val lastEnd = HashMap<String, RunEvent>() // node -> its latest end event
        val started = HashMap<String, Int>() // node -> executions started so far
        val completed = HashSet<String>() // path#execution of every NodeCompleted
        val compensated = HashSet<String>()
        var compensating: String? = null // the compensation open now (docs/semantics.md §13.6, rule 6)
        for (event in events) {
            if (event is RunEvent.NodeCompleted) completed += "${event.path}#${event.execution}"
            when (event) {
                is RunEvent.NodeCompensating -> {
                    val id = "${event.path}#${event.execution}"
                    check(id in completed) { "$event does not follow a NodeCompleted of that execution" }
                    check(open.isEmpty()) { "$event while executions are open: $open" }
                    check(compensating == null) { "$event while the compensation of $compensating is open" }
                    check(compensated.add(id)) { "$event: that execution was compensated before" }
                    compensating = id
                }
                is RunEvent.NodeCompensated, is RunEvent.NodeCompensationFailed -> {
                    val id = "${(event as RunEvent.NodeEvent).path}#${event.execution}"
                    check(compensating == id) { "$event without its NodeCompensating (open: $compensating)" }
                    compensating = null
                }
                is RunEvent.NodeStarted -> {
                    val path = event.path
                    check(compensated.isEmpty()) { "$event after the run began to compensate" }
                    check(path !in open) { "$event while $path still runs: a node ran concurrently with itself" }
                    checkInsideParent(path, event, open)
                    // A child run numbers its own executions; a map task has its map's number.
                    if (path == event.nodeId) {
                        val expected = (started[path] ?: 0) + 1
                        check(event.execution == expected) { "$event: expected execution number $expected" }
                        started[path] = expected
                    }
                    open += path
                    openExecution[path] = event.execution
                }
                is RunEvent.NodeRetrying -> checkOpen(event.path, event.execution, event, open, openExecution)
                is RunEvent.Custom -> checkOpen(event.path, event.execution, event, open, openExecution)
                is RunEvent.NodeCacheHit -> checkOpen(event.path, event.execution, event, open, openExecution)
                is RunEvent.NodeCacheStored -> checkOpen(event.path, event.execution, event, open, openExecution)
                is RunEvent.MetersCharged -> checkOpen(event.path, event.execution, event, open, openExecution)
                is RunEvent.NodeCompleted -> end(event.path, event.execution, event, open, openExecution, lastEnd)
                is RunEvent.NodeFailed -> end(event.path, event.execution, event, open, openExecution, lastEnd)
                is RunEvent.NodeCancelled -> end(event.path, event.execution, event, open, openExecution, lastEnd)
                is RunEvent.EdgeTaken -> {
                    check(event.from !in open) { "$event while an execution of ${event.from} is open" }
                    val end = lastEnd[event.from]
                    // After a completion, or after a failure routed to the edge's target (§13.3).
                    check(end is RunEvent.NodeCompleted || (end is RunEvent.NodeFailed && end.routedTo == event.to)) {
                        "$event does not follow a NodeCompleted of ${event.from} (last end: ${lastEnd[event.from]})"
                    }
                }
                else -> Unit
            }
        }
        if (complete) open.shouldBeEmpty()
        if (complete) check(compensating == null) { "the compensation of $compensating did not end" }
    }

    private fun checkOpen(
        node: String,
        execution: Int,
        event: RunEvent,
        open: Set<String>,
        openExecution: Map<String, Int>,
    ) {
        check(node in open && openExecution[node] == execution) { "$event outside its execution's start and end" }
    }

    private fun end(
        node: String,
        execution: Int,
        event: RunEvent,
        open: MutableSet<String>,
        openExecution: Map<String, Int>,
        lastEnd: MutableMap<String, RunEvent>,
    ) {
        checkOpen(node, execution, event, open, openExecution)
        open -= node
        lastEnd[node] = event
        check(open.none { it.startsWith("$node/") || it.startsWith("$node[") }) {
            "$event while executions inside it are still open: ${open.filter { it.startsWith(node) }}"
        }
    }

    /** The events of a child run's node or a map task come inside their parent's execution (`docs/semantics.md` §11). */
    private fun checkInsideParent(path: String, event: RunEvent, open: Set<String>) {
        val cut = maxOf(path.lastIndexOf('/'), path.lastIndexOf('['))
        if (cut <= 0) return
        val parent = path.substring(0, cut)
        check(parent in open) { "$event outside the execution of $parent" }
    }

    fun isTerminal(event: RunEvent): Boolean =
        event is RunEvent.RunCompleted || event is RunEvent.RunFailed || event is RunEvent.RunCancelled
}

/** The result carried by a terminal event. */
val RunEvent.terminalResult: RunResult
    get() = when (this) {
        is RunEvent.RunCompleted -> result
        is RunEvent.RunFailed -> result
        is RunEvent.RunCancelled -> result
        else -> error("$this is not a terminal event")
    }

/** A recorded run: every event (checked against [EventInvariants]) and the result of the terminal one. */
class RecordedRun(val events: List<RunEvent>) {
    val result: RunResult = events.last().terminalResult

    inline fun <reified E : RunEvent> all(): List<E> = events.filterIsInstance<E>()

    fun indexOf(predicate: (RunEvent) -> Boolean): Int = events.indexOfFirst(predicate).also { check(it >= 0) }
}

/** Runs this graph through [Graph.events], collects every event and checks the pairing rules. */
suspend fun Graph.record(input: State = schema.initialState(), options: RunOptions = RunOptions.DEFAULT): RecordedRun {
    val events = events(input, options).toList()
    EventInvariants.check(events)
    return RecordedRun(events)
}

/** Options that run a graph in this test's virtual time. */
fun TestScope.virtualTime(executionHistoryLimit: Int = 10_000): RunOptions =
    RunOptions(
        dispatcher = StandardTestDispatcher(testScheduler),
        timeSource = testScheduler.timeSource,
        executionHistoryLimit = executionHistoryLimit,
    )
