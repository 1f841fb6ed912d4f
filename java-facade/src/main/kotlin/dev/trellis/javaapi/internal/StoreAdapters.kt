package dev.trellis.javaapi.internal

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunInfo
import dev.trellis.javaapi.AsyncCheckpointStore
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.future.await
import kotlinx.coroutines.future.future
import java.util.Optional
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage

/** A store written in Java ([AsyncCheckpointStore]) as the runtime's [CheckpointStore]. */
internal class CheckpointStoreAdapter(val store: AsyncCheckpointStore) : CheckpointStore {
    override suspend fun claim(runId: String, owner: String): Lease = store.claim(runId, owner).value("claim")

    override suspend fun renew(lease: Lease): Lease = store.renew(lease).value("renew")

    override suspend fun release(lease: Lease) {
        store.release(lease).done("release")
    }

    override suspend fun append(lease: Lease, record: CheckpointRecord) {
        store.append(lease, record).done("append")
    }

    override suspend fun latest(runId: String): CheckpointRecord? = store.latest(runId).value("latest").orElse(null)

    override suspend fun get(runId: String, sequence: Long): CheckpointRecord? = store.get(
        runId,
        sequence,
    ).value("get").orElse(null)

    override suspend fun history(runId: String): List<CheckpointRecord> = store.history(runId).value("history")

    override suspend fun runs(): List<RunInfo> = store.runs().value("runs")

    override suspend fun prune(runId: String, keepLatest: Int): Int = store.prune(runId, keepLatest).value("prune")

    override suspend fun delete(runId: String) {
        store.delete(runId).done("delete")
    }

    override fun close() {
        store.close()
    }

    override fun toString(): String = store.toString()

    /** The stage's value; a `CompletionException` around a failure is unwrapped, cancelling the caller cancels it. */
    private suspend fun <T> CompletionStage<T>?.value(method: String): T =
        stage(method).await() ?: throw NullPointerException(
            "The stage returned by ${store.javaClass.name}.$method completed with null; complete it with a value " +
                "(Optional.empty() for no record).",
        )

    private suspend fun CompletionStage<Void?>?.done(method: String) {
        stage(method).await()
    }

    private fun <T> CompletionStage<T>?.stage(method: String): CompletionStage<T> = this ?: throw NullPointerException(
        "${store.javaClass.name}.$method returned null; return a CompletionStage, e.g. CompletableFuture.completedFuture(...).",
    )
}

/** The runtime's [CheckpointStore] as an [AsyncCheckpointStore]: each call starts on the caller's thread. */
internal class AsyncStoreAdapter(private val store: CheckpointStore) : AsyncCheckpointStore {
    // Failures reach the caller through the futures; nothing is left for a global handler to print.
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Unconfined + CoroutineExceptionHandler { _, _ -> })

    private fun <T> call(block: suspend CoroutineScope.() -> T): CompletableFuture<T> =
        scope.future(start = CoroutineStart.UNDISPATCHED, block = block)

    override fun claim(runId: String, owner: String): CompletionStage<Lease> = call { store.claim(runId, owner) }

    override fun renew(lease: Lease): CompletionStage<Lease> = call { store.renew(lease) }

    override fun release(lease: Lease): CompletionStage<Void?> = call {
        store.release(lease)
        null
    }

    override fun append(lease: Lease, record: CheckpointRecord): CompletionStage<Void?> = call {
        store.append(lease, record)
        null
    }

    override fun latest(runId: String): CompletionStage<Optional<CheckpointRecord>> = call {
        Optional.ofNullable(store.latest(runId))
    }

    override fun get(runId: String, sequence: Long): CompletionStage<Optional<CheckpointRecord>> =
        call { Optional.ofNullable(store.get(runId, sequence)) }

    override fun history(runId: String): CompletionStage<List<CheckpointRecord>> = call { store.history(runId) }

    override fun runs(): CompletionStage<List<RunInfo>> = call { store.runs() }

    override fun prune(runId: String, keepLatest: Int): CompletionStage<Int> = call { store.prune(runId, keepLatest) }

    override fun delete(runId: String): CompletionStage<Void?> = call {
        store.delete(runId)
        null
    }

    override fun close() {
        store.close()
    }

    override fun asCheckpointStore(): CheckpointStore = store

    override fun toString(): String = store.toString()
}
