package dev.trellis.javaapi.internal

import dev.trellis.checkpoint.RunInfo
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.javaapi.JavaRunOptions
import dev.trellis.runtime.CheckpointInfo
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.RunSnapshot
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.fork
import dev.trellis.runtime.stateAt
import dev.trellis.runtime.takeSnapshot
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.future.future
import java.util.concurrent.CompletableFuture
import java.util.function.UnaryOperator

/**
 * What a `TrellisRunner` does with the runs in its options' checkpoint store besides running them: fork, read
 * checkpoints, states and snapshots, prune and delete, list. Each call needs the store ([checkpointing] names the fix when
 * the options have none) and runs as a future in the runner's [scope].
 */
internal class StoredRuns(
    private val graph: Graph,
    private val options: JavaRunOptions,
    private val scope: CoroutineScope,
) {
    fun checkpointing(what: String): Checkpointing = options.checkpointingOrNull ?: throw IllegalStateException(
        "$what needs a checkpoint store, but the runner's options have none: " +
            "set JavaRunOptions.builder().checkpointing(new Checkpointing(store)).",
    )

    fun fork(runId: String, sequence: Long, edit: UnaryOperator<State>): CompletableFuture<RunResult> {
        checkpointing("forkAsync")
        return scope.future { graph.fork(runId, sequence, options.runOptions) { edit.apply(it) } }
    }

    fun checkpoints(runId: String): CompletableFuture<List<CheckpointInfo>> {
        val store = checkpointing("checkpointsAsync").store
        return scope.future { graph.checkpoints(store, runId) }
    }

    fun stateAt(runId: String, sequence: Long): CompletableFuture<State> {
        val checkpointing = checkpointing("stateAtAsync")
        return scope.future { graph.stateAt(checkpointing.store, runId, sequence, checkpointing.migrations) }
    }

    fun snapshot(runId: String): CompletableFuture<RunSnapshot> {
        val checkpointing = checkpointing("takeSnapshotAsync")
        return scope.future { graph.takeSnapshot(checkpointing.store, runId, migrations = checkpointing.migrations) }
    }

    fun delete(runId: String): CompletableFuture<Void?> {
        val store = checkpointing("deleteAsync").store
        return scope.future {
            store.delete(runId)
            null
        }
    }

    fun prune(runId: String, keepLatest: Int): CompletableFuture<Int> {
        val store = checkpointing("pruneAsync").store
        require(keepLatest >= 1) {
            "pruneAsync(\"$runId\", $keepLatest): keepLatest must be at least 1; " +
                "delete the run with deleteAsync instead."
        }
        return scope.future { store.prune(runId, keepLatest) }
    }

    fun runs(): CompletableFuture<List<RunInfo>> {
        val store = checkpointing("runsAsync").store
        val graphId = graph.id
        return scope.future { store.runs().filter { it.graphId == graphId } }
    }
}
