@file:JvmName("Retries")

package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.runtime.internal.CallNames
import dev.trellis.runtime.internal.checkpoint.loadRecord
import dev.trellis.runtime.internal.events.EventLog
import dev.trellis.runtime.internal.policies.COMPENSATING
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.engineEvents
import dev.trellis.runtime.internal.scheduling.resultFor
import kotlinx.coroutines.flow.Flow

/**
 * Retries run [runId], which ended `FAILED`, from its last checkpoint before the failure: the nodes that failed (and
 * any that were running then) run again; every node whose completion had been checkpointed keeps it and does not run
 * again. The run keeps its id and its history: the retry's first checkpoint, saved before any node runs, is labelled
 * `RETRY` (see [checkpoints]), and later checkpoints continue the same sequence. A retry may itself fail and be
 * retried again. Nodes that completed after the failure was recorded (graceful mode lets running nodes finish) had
 * their edges left undecided, so they run again too (`docs/persistence.md`, "Retrying a failed run").
 *
 * ```kotlin
 * try {
 *     graph.invoke(input, options)
 * } catch (e: GraphRunException) {
 *     // fix what failed (a service down, a bug in a node deployed again), then:
 *     graph.retry(e.result.runId, options)
 * }
 * ```
 *
 * @throws IllegalArgumentException when the options have no checkpointing, or name another run id.
 * @throws IllegalStateException when the run did not fail (resume an unfinished run, fork a completed one), when it
 *   compensated after its failure, or when it has no checkpoint from before its failure (`Checkpointing.Mode.ON_EXIT`).
 * @throws CheckpointFormatException when the graph changed since the run failed in a way its checkpoints cannot be
 *   loaded into (a schema version without a migration, a node removed): the message names the fix.
 * @throws GraphRunException when the retry fails in turn.
 */
public suspend fun Graph.retry(runId: String, options: RunOptions): RunResult =
    retryEngine(runId, options, null).resultFor(options)

/** Like [retry], as a cold flow of the retried run's events (see [run]). */
public fun Graph.retryEvents(runId: String, options: RunOptions): Flow<RunEvent> =
    engineEvents(options) { log -> retryEngine(runId, options, log) }

private suspend fun Graph.retryEngine(runId: String, options: RunOptions, events: EventLog?): Engine {
    val checkpointing = requireNotNull(options.checkpointing) {
        "retry needs a checkpoint store: pass RunOptions(checkpointing = Checkpointing(store))."
    }
    val calls = CallNames.current()
    require(options.runId == null || options.runId == runId) {
        "${calls.retry(runId)} was given another run id '${options.runId}'; leave ${calls.runIdSetting} unset to retry."
    }
    val store = checkpointing.store
    val latest = store.latest(runId) ?: throw NoSuchElementException(
        "The store has no checkpoint of run '$runId'; check the run id (store.runs() lists the runs it has).",
    )
    check(latest.status == Status.FAILED.name) {
        if (latest.status == Status.COMPLETED.name) {
            "Run '$runId' completed; there is nothing to retry. Fork it (${calls.fork(runId)}) to run it again."
        } else {
            "Run '$runId' did not fail (its latest checkpoint is ${latest.status}); continue it with " +
                "${calls.resume(runId)} instead."
        }
    }
    val history = store.history(runId)
    val (_, failed) = retryLoad(runId, latest.sequence, latest.schemaVersion) {
        loadRecord(this, store, runId, latest.sequence, checkpointing.migrations)
    }
    check(failed.data.compensations == null && history.none { it.status == COMPENSATING }) {
        "Run '$runId' compensated its completed nodes after it failed, so a retry would keep completions whose " +
            "effects were undone. Fork it from a checkpoint before its failure (${calls.fork(runId)}; " +
            "graph.checkpoints(store, \"$runId\") lists them) to run it again."
    }
    val base = history.lastOrNull {
        it.sequence < latest.sequence && it.status != Status.FAILED.name && it.status != Status.COMPLETED.name
    } ?: throw IllegalStateException(
        "Run '$runId' has no checkpoint from before its failure to retry from (with Checkpointing.Mode.ON_EXIT a run " +
            "saves only its end). Start it again as a new run.",
    )
    val (_, restored) = retryLoad(runId, base.sequence, base.schemaVersion) {
        loadRecord(this, store, runId, base.sequence, checkpointing.migrations)
    }
    return Engine(
        this,
        restored.state,
        options.with(runId, options.control),
        events,
        restored,
        lastSequence = latest.sequence,
        retrying = true,
    )
}

/** [load], with a checkpoint the graph can no longer load reported as what the retry needs. */
private inline fun <T> Graph.retryLoad(runId: String, sequence: Long, version: Int, load: () -> T): T = try {
    load()
} catch (e: CheckpointFormatException) {
    throw CheckpointFormatException(
        "Run '$runId' cannot be retried by this version of graph '$id': checkpoint $sequence cannot be loaded " +
            "(${e.message}). Retry it with the graph version that ran it, or, when the state schema changed (from " +
            "version $version to ${schema.version}), add a StateMigration to Checkpointing(migrations = ...).",
        e,
    )
}
