package dev.trellis.runtime.internal.policies

import dev.trellis.graph.Graph
import dev.trellis.graph.Node
import dev.trellis.graph.State
import dev.trellis.runtime.CompensationResult
import dev.trellis.runtime.ResumedFailureException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.CompensableData
import dev.trellis.runtime.internal.checkpoint.OutcomeData
import dev.trellis.runtime.internal.checkpoint.PositionCodec
import dev.trellis.runtime.internal.events.EventHead
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.persistence.checkpoint
import dev.trellis.runtime.internal.rethrowIfFatal
import dev.trellis.runtime.internal.scheduling.Engine
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.isActive
import kotlinx.coroutines.withContext
import java.time.Duration

/*
 * Compensation (`docs/semantics.md` §13.6): the completed executions of nodes with a compensation, kept in completion
 * order with the state right after their merge, and the phase of a failed run that compensates them in reverse. A run
 * whose nodes declare no compensation never allocates any of this.
 */

/** One completed execution to compensate: its node, number, path and the state right after its merge. */
internal class Compensable(val node: Node, val execution: Int, val path: String, val state: State) {
    /** What the compensation sees: the state, through the node's read slice when it declares one. */
    fun view(): State = node.slice?.view(state, node.id) {} ?: state

    /** The head of an event of this entry's compensation in run [runId], numbered [sequence], made at [timestamp]. */
    fun eventHead(runId: String, sequence: Long, timestamp: java.time.Instant): EventHead =
        EventHead(runId, sequence, timestamp, node.id, execution, path, -1)
}

/** A run's compensable executions and, once it compensates, the outcomes so far (one per entry, in reverse order). */
internal class CompensationLog {
    val entries = ArrayList<Compensable>()

    /** The outcomes so far, in the order compensated; null until the run compensates. */
    var outcomes: ArrayList<OutcomeData>? = null

    /** The outcomes as the result reports them. */
    val results = ArrayList<CompensationResult>()

    /** How many [entries] the run's checkpoints hold already (a delta writes those after). */
    var saved = 0
}

/** Records a completed execution of a node with a compensation (called after its merge). */
internal fun Engine.addCompensable(execution: Execution) {
    val compensationLog = compensationLog ?: CompensationLog().also { compensationLog = it }
    compensationLog.entries += Compensable(execution.node, execution.number, execution.path, currentState)
}

/**
 * The compensable executions of a child run of [execution] (map task [slot], or -1), handed to the execution that ran
 * it: they join this run's list when that execution ends (`docs/semantics.md` §13.6, subgraphs and maps).
 */
internal fun Execution.addChildCompensable(slot: Int, entries: List<Compensable>) {
    if (entries.isEmpty()) return
    synchronized(this) {
        val map = childCompensable ?: java.util.TreeMap<Int, MutableList<Compensable>>().also { childCompensable = it }
        map.getOrPut(slot) { ArrayList() } += entries
    }
}

/** Moves the child runs' compensable executions of [execution] (which ended) to this run's list, in task order. */
internal fun Engine.takeChildCompensable(execution: Execution) {
    val map = synchronized(execution) { execution.childCompensable.also { execution.childCompensable = null } }
        ?: return
    val compensationLog = compensationLog ?: CompensationLog().also { compensationLog = it }
    for (list in map.values) compensationLog.entries += list
}

/**
 * Runs the compensations not run yet, in reverse completion order, one at a time; each outcome is recorded, and, when
 * the run failed and saves checkpoints, checkpointed before it starts and after it ends. A cancellation of the caller
 * stops here (rethrown) after recording the compensation it cut off.
 */
internal suspend fun Engine.compensate() {
    val compensationLog = compensationLog ?: return
    val entries = compensationLog.entries
    val outcomes = compensationLog.outcomes ?: ArrayList<OutcomeData>().also { compensationLog.outcomes = it }
    if (outcomes.size >= entries.size) return
    val durable = checkpointer != null && recorder.errors.isNotEmpty() && !checkpointer.fencedOut
    while (outcomes.size < entries.size) {
        val k = outcomes.size
        val entry = entries[entries.size - 1 - k]
        outcomes += OutcomeData(entry.path, entry.execution, STARTED)
        if (durable) saveProgress()
        outbox.send { seq -> RunEvent.NodeCompensating(entry.eventHead(runId, seq, now())) }
        val start = nanoTime()
        var error: Throwable? = null
        try {
            entry.node.compensation!!.compensate(entry.view())
        } catch (e: Throwable) {
            if (e is VirtualMachineError && e !is StackOverflowError) throw e
            error = e
        }
        val took = Duration.ofNanos(nanoTime() - start)
        val cut = error is CancellationException && !currentCoroutineContext().isActive
        val status = when {
            cut -> Status.CANCELLED
            error != null -> Status.FAILED
            else -> Status.COMPLETED
        }
        outcomes[k] = OutcomeData(entry.path, entry.execution, status.name, error?.toString())
        compensationLog.results += CompensationResult(entry.node.id, entry.execution, entry.path, status, error)
        if (status == Status.FAILED) recorder.errors.firstOrNull()?.addSuppressed(error!!)
        withContext(NonCancellable) {
            outbox.send { seq ->
                val head = entry.eventHead(runId, seq, now())
                if (error == null) {
                    RunEvent.NodeCompensated(head, took)
                } else {
                    RunEvent.NodeCompensationFailed(head, error, took)
                }
            }
            if (durable) saveProgress()
        }
        if (cut) throw error
    }
}

/** Checkpoints the compensation's progress; a failure to save is reported on the run's error, never thrown. */
private suspend fun Engine.saveProgress() {
    try {
        checkpoint(COMPENSATING)
    } catch (e: Throwable) {
        e.rethrowIfFatal(currentCoroutineContext())
        recorder.errors.firstOrNull()?.addSuppressed(e)
    }
}

/** The checkpoint label of a failed run that compensates. */
internal const val COMPENSATING = "COMPENSATING"

/** The outcome label of a compensation checkpointed as started, not yet as ended. */
private const val STARTED = "STARTED"

/** The entries and outcomes of a restored run; a compensation started without recorded end was cut off. */
internal fun Engine.restoreCompensationLog(
    entries: List<CompensableData>,
    outcomes: List<OutcomeData>?,
    errors: List<String>,
) {
    if (entries.isEmpty() && outcomes == null) return
    val compensationLog = CompensationLog()
    for (data in entries) compensationLog.entries += decodeCompensable(data)
    compensationLog.saved = compensationLog.entries.size
    if (outcomes != null) {
        val list = ArrayList<OutcomeData>(outcomes.size)
        for ((k, outcome) in outcomes.withIndex()) {
            val entry = compensationLog.entries[compensationLog.entries.size - 1 - k]
            val status = if (outcome.status == STARTED) Status.CANCELLED.name else outcome.status
            list += OutcomeData(outcome.path, outcome.execution, status, outcome.error)
            val error = outcome.error?.let { ResumedFailureException(it) }
            compensationLog.results +=
                CompensationResult(entry.node.id, entry.execution, entry.path, Status.valueOf(status), error)
        }
        compensationLog.outcomes = list
        recorder.errors += ResumedFailureException(errors.firstOrNull() ?: "(no description recorded)")
    }
    this.compensationLog = compensationLog
}

/** Whether this run was restored in the middle of its compensations: it runs no node, only them. */
internal val Engine.compensating: Boolean get() = compensationLog?.outcomes != null

/** [entry] as a checkpoint stores it: the state values it saw (in its node's read slice, when declared). */
internal fun encodeCompensable(entry: Compensable): CompensableData {
    val values = LinkedHashMap<String, kotlinx.serialization.json.JsonElement>()
    val reads = entry.node.slice?.reads
    for (key in entry.state.schema.keys) {
        if (reads != null && key !in reads) continue
        val value = entry.state.valueAt(key.index)
        if (value !== State.Unset) values[key.name] = PositionCodec.encodeValue(key, value)
    }
    return CompensableData(entry.node.id, entry.execution, entry.path, values)
}

/** Reads an entry back, finding its node by its path from this run's graph (through subgraphs and maps). */
private fun Engine.decodeCompensable(data: CompensableData): Compensable {
    val prefix = nesting?.prefix ?: ""
    val relative = if (data.path.startsWith(prefix)) data.path.substring(prefix.length) else data.path
    var owner: Graph = graph
    val segments = relative.split('/')
    for (segment in segments.dropLast(1)) {
        val id = segment.substringBefore('[')
        owner = owner.nodes.firstOrNull { it.id == id }?.subgraph ?: throw unknownNode(data)
    }
    val node = owner.nodes.firstOrNull { it.id == segments.last().substringBefore('[') }
    if (node?.compensation == null) throw unknownNode(data)
    val schema = owner.schema
    val values = schema.initialState().copyValues()
    for ((name, element) in data.state) {
        val key = schema.keyOrNull(name) ?: throw unknownNode(data)
        values[key.index] = PositionCodec.decodeValue(key, element, "compensation of '${data.path}'")
    }
    return Compensable(node, data.execution, data.path, State.fromArrays(schema, values, LongArray(values.size)))
}

private fun Engine.unknownNode(data: CompensableData) = dev.trellis.runtime.CheckpointFormatException(
    "The checkpoint of run '$runId' holds a compensation of '${data.path}' (execution ${data.execution}), " +
        "which graph '${graph.id}' has no longer (no such node with a compensation, or a state key it no longer " +
        "declares); resume the run with the graph version that wrote it.",
)

/** Entries stored with a completed map task, read back. */
internal fun Engine.decodeCompensables(list: List<CompensableData>): List<Compensable> =
    list.map { decodeCompensable(it) }

/** The compensable executions of map task [slot] of [execution], as its checkpoint entry stores them. */
internal fun compensableOfTask(execution: Execution, slot: Int): List<CompensableData> =
    synchronized(execution) { execution.childCompensable?.get(slot)?.toList() }?.map { encodeCompensable(it) }
        ?: emptyList()
