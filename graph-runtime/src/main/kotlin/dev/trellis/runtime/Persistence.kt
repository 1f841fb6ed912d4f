@file:JvmName("Persistence")

package dev.trellis.runtime

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointRef
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.graph.Graph
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.State
import dev.trellis.runtime.internal.CallNames
import dev.trellis.runtime.internal.checkpoint.loadRecord
import dev.trellis.runtime.internal.events.EventLog
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.engineEvents
import dev.trellis.runtime.internal.scheduling.resultFor
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.time.Instant

/*
 * Durable runs' entry points (`docs/persistence.md`): resuming a run from its latest checkpoint (with answers to its
 * interrupts), forking a new run from any checkpoint of another (time travel, [fork]), and reading a run's
 * checkpoint history ([checkpoints], [stateAt]).
 */

/**
 * Continues run [runId] from its latest checkpoint in `options.checkpointing.store`: completed nodes do not
 * run again; nodes that were running when the run stopped (crash, drain, interrupt) run again. [answers]
 * gives interrupted nodes their answers by node id.
 *
 * ```kotlin
 * val paused = graph.invoke(input, options)                       // status INTERRUPTED
 * val done = graph.resume(paused.runId, options, mapOf("approve" to "yes"))
 * ```
 *
 * @throws IllegalArgumentException when the options have no checkpointing, or an answer names a node that has no pending interrupt.
 * @throws IllegalStateException when the run already ended (completed or failed); fork it to run it again.
 * @throws CheckpointFormatException when the checkpoint cannot be loaded.
 */
public suspend fun Graph.resume(
    runId: String,
    options: RunOptions,
    answers: Map<String, String> = emptyMap(),
): RunResult {
    return resumeEngine(runId, options, answers, null).resultFor(options)
}

/**
 * [resume] with one [answer] for the single pending interrupt.
 *
 * @throws IllegalArgumentException when the run has no pending interrupt or more than one (answer those by node id).
 * @throws IllegalStateException when the run already ended (completed or failed); fork it to run it again.
 */
public suspend fun Graph.resume(runId: String, options: RunOptions, answer: String): RunResult =
    resume(runId, options, answerPending(runId, options, answer))

/** Like [resume], as a cold flow of the resumed run's events (see [events]). */
@JvmSynthetic
public fun Graph.resumeEvents(
    runId: String,
    options: RunOptions,
    answers: Map<String, String> = emptyMap(),
): Flow<RunEvent> =
    engineEvents(options) { log -> resumeEngine(runId, options, answers, log) }

/**
 * Like [resume] with one [answer] for the single pending interrupt, as a cold flow of the resumed run's events.
 * The flow fails with [IllegalArgumentException] when the run has no pending interrupt or more than one, with
 * [IllegalStateException] when it already ended.
 */
@JvmSynthetic
public fun Graph.resumeEvents(runId: String, options: RunOptions, answer: String): Flow<RunEvent> = flow {
    emitAll(resumeEvents(runId, options, answerPending(runId, options, answer)))
}

/**
 * Starts a new run from checkpoint [sequence] of run [runId] (time travel), with the state changed by [edit];
 * the new run's first checkpoint records where it was forked from. The original run is not touched.
 *
 * ```kotlin
 * val history = graph.checkpoints(store, "r1")
 * val fork = graph.fork("r1", history[2].sequence, RunOptions(checkpointing = Checkpointing(store))) { it.with(Doc.tone, "formal") }
 * ```
 */
public suspend fun Graph.fork(
    runId: String,
    sequence: Long,
    options: RunOptions,
    edit: (State) -> State = { it },
): RunResult {
    val checkpointing = requireCheckpointing(options, "fork")
    val (_, restored) = loadRecord(this, checkpointing.store, runId, sequence, checkpointing.migrations)
    val edited = edit(restored.state)
    require(edited.schema === schema) { "The edited state must keep schema '${schema.name}'." }
    val values = edited.copyValues()
    val versions = restored.state.copyVersions()
    var version = restored.data.version
    for (key in topology.keys) {
        if (values[key.index] != restored.state.valueAt(key.index)) versions[key.index] = ++version
    }
    val state = State.fromArrays(schema, values, versions)
    val data = dev.trellis.runtime.internal.checkpoint.PositionData(
        graphId = id,
        runId = options.runId ?: "",
        status = "RUNNING",
        stateSchema = schema.name,
        stateVersion = schema.version,
        version = version,
        lastWriters = restored.data.lastWriters,
        nodes = restored.data.nodes,
        triggers = restored.data.triggers,
        ready = restored.data.ready + restored.data.interrupts.map { it.node }.filter { it !in restored.data.ready },
        totalExecutions = restored.data.totalExecutions,
        meters = restored.data.meters,
        spentNanos = restored.data.spentNanos,
    )
    val engine = Engine(
        this,
        state,
        options,
        null,
        dev.trellis.runtime.internal.checkpoint.Restored(data, state, restored.appData, restored.children),
        forkedFrom = CheckpointRef(runId, sequence),
        fresh = true,
    )
    return engine.resultFor(options)
}

/** The checkpoints of run [runId] in [store], oldest first. */
public suspend fun Graph.checkpoints(store: CheckpointStore, runId: String): List<CheckpointInfo> =
    store.history(runId).filter { it.graphId == id }.map { CheckpointInfo(it) }

/** The state at checkpoint [sequence] of run [runId] (the latest when null). */
public suspend fun Graph.stateAt(
    store: CheckpointStore,
    runId: String,
    sequence: Long? = null,
    migrations: List<StateMigration> = emptyList(),
): State = loadRecord(this, store, runId, sequence, migrations).second.state

/** One checkpoint in a run's history, as listed by [checkpoints]. */
public class CheckpointInfo internal constructor(private val record: CheckpointRecord) {
    /** The run. */
    public val runId: String get() = record.runId

    /** Its position in the run's history, from 1. */
    public val sequence: Long get() = record.sequence

    /** The checkpoint it follows, or null for the first. */
    public val parentSequence: Long? get() = record.parentSequence

    /** When it was saved. */
    public val createdAt: Instant get() = record.createdAt

    /** The run's status then: RUNNING, COMPLETED, FAILED, INTERRUPTED or DRAINED. */
    public val status: String get() = record.status

    /** Whether it is a full snapshot. */
    public val full: Boolean get() = record.kind == CheckpointRecord.Kind.FULL

    /** The checkpoint of another run this run was forked from, on a fork's first checkpoint. */
    public val forkedFrom: CheckpointRef? get() = record.forkedFrom

    override fun toString(): String = "CheckpointInfo($runId#$sequence, $status, full=$full)"
}

/**
 * Runs that continue in segments elsewhere (trellis-temporal: a run continued as a new workflow execution resumes
 * from the checkpoint its previous execution carried over). Not for users: resume a run with [resume].
 */
@InternalTrellisApi
public object RemoteRuns {
    /**
     * Starts run [runId] of [graph] again from its latest checkpoint in `options.checkpointing.store`, as
     * `Graph.start` starts a run: in [scope], with [onEvent] receiving every event of the resumed run (numbered from 0,
     * its `RunStarted` first), and returns its handle.
     */
    @JvmStatic
    public fun startResumed(
        graph: Graph,
        scope: CoroutineScope,
        runId: String,
        options: RunOptions,
        onEvent: suspend (RunEvent) -> Unit,
    ): RunHandle {
        val log = EventLog()
        return launchRun(scope, options, runId, log, { graph.resumeEngine(runId, options, emptyMap(), log) }, onEvent)
    }
}

private suspend fun Graph.resumeEngine(
    runId: String,
    options: RunOptions,
    answers: Map<String, String>,
    events: dev.trellis.runtime.internal.events.EventLog?,
): Engine {
    val checkpointing = requireCheckpointing(options, "resume")
    val calls = CallNames.current()
    require(options.runId == null || options.runId == runId) {
        "${calls.resume(
            runId,
        )} was given another run id '${options.runId}'; leave ${calls.runIdSetting} unset to resume."
    }
    val (record, restored) = loadRecord(this, checkpointing.store, runId, null, checkpointing.migrations)
    requireNotEnded(record, calls)
    val pending = restored.data.interrupts.map { it.path ?: it.node }.toSet()
    for (node in answers.keys) {
        if (node !in pending) requireNotOwned(checkpointing, runId)
        require(node in pending) {
            "Node '$node' of run '$runId' has no pending interrupt to answer; pending: ${pending.ifEmpty { "none" }}."
        }
    }
    return Engine(
        this,
        restored.state,
        options.with(runId, options.control),
        events,
        restored,
        answers,
        lastSequence = record.sequence,
    )
}

private suspend fun Graph.answerPending(runId: String, options: RunOptions, answer: String): Map<String, String> {
    val checkpointing = requireCheckpointing(options, "resume")
    val (record, restored) = loadRecord(this, checkpointing.store, runId, null, checkpointing.migrations)
    // An ended run is in the wrong state for any resume, answered or not: the same error as without an answer.
    requireNotEnded(record, CallNames.current())
    val pending = restored.data.interrupts.map { it.path ?: it.node }
    if (pending.size != 1) requireNotOwned(checkpointing, runId)
    require(pending.size == 1) {
        if (pending.isEmpty()) {
            "Run '$runId' has no pending interrupt to answer; resume it without an answer."
        } else {
            "Run '$runId' has ${pending.size} pending interrupts ($pending); answer each by node id with " +
                "${CallNames.current().resumeWithAnswers(runId)}."
        }
    }
    return mapOf(pending.single() to answer)
}

/** Refuses to resume a run that ended ([IllegalStateException]): it can only be forked. */
private fun requireNotEnded(record: CheckpointRecord, calls: CallNames) {
    check(record.status != Status.COMPLETED.name && record.status != Status.FAILED.name) {
        "Run '${record.runId}' already ended ${record.status}; it cannot be resumed. Fork it from one of its " +
            "checkpoints (${calls.fork(record.runId)}) to run it again."
    }
}

/**
 * Before an answer is refused for want of a pending interrupt: when another owner holds a live lease on the run (it
 * is resuming it and has answered the interrupt already), that is the error to report — [RunOwnedException], as a
 * resume a moment earlier would have had — not a missing interrupt. Only on this error path: it lists the runs.
 */
private suspend fun requireNotOwned(checkpointing: Checkpointing, runId: String) {
    val info = checkpointing.store.runs().firstOrNull { it.runId == runId } ?: return
    val holder = info.owner ?: return
    val until = info.leaseExpiresAt ?: return
    if (holder != checkpointing.owner && until.isAfter(Instant.now())) {
        throw RunOwnedException(runId, checkpointing.owner, holder, until)
    }
}

private fun requireCheckpointing(options: RunOptions, what: String): Checkpointing =
    requireNotNull(options.checkpointing) {
        "$what needs a checkpoint store: pass RunOptions(checkpointing = Checkpointing(store))."
    }
