package dev.trellis.runtime.internal.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.runtime.Checkpointing
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch

/**
 * The step checkpoints of a run with [Checkpointing.Durability.ASYNC] (`docs/persistence.md`, "Durability: waiting for
 * each step, or not"): one coroutine appends them to [store] in the order they were handed over, while the run goes
 * on; [submit] waits only while [Checkpointing.Durability.MAX_PENDING] are not yet stored. The first append that fails
 * stops the writing — the checkpoints after it are dropped, so the stored ones are always a prefix of the run's — and
 * its error is thrown by the next [submit] or [flush]. Used by the run's saver only (the [Checkpointer], serialized).
 */
internal class BehindWriter(private val store: CheckpointStore, private val lease: () -> Lease) {
    private class Write(val record: CheckpointRecord) {
        val stored = CompletableDeferred<Unit>()
    }

    /** Handed-over writes not yet taken by the writer; with the one being written, at most MAX_PENDING. */
    private val queue = Channel<Write>(Checkpointing.Durability.MAX_PENDING - 1)

    @Volatile
    private var failure: Throwable? = null

    /** The last write handed over; [flush] waits for it. */
    private var last: Write? = null

    private var writer: Job? = null

    /** Hands [record] to the writer; throws the error of an earlier write that failed instead. */
    suspend fun submit(record: CheckpointRecord) {
        failure?.let { throw it }
        val write = Write(record)
        if (writer == null) writer = start()
        queue.send(write)
        last = write
    }

    /** Waits until every write handed over is stored; throws the error of the first that failed. */
    suspend fun flush() {
        last?.stored?.await()
        failure?.let { throw it }
    }

    /** Ends the writing once every write handed over was tried; call when the run ends, before the lease goes. */
    suspend fun close() {
        queue.close()
        writer?.join()
    }

    private fun start(): Job = CoroutineScope(Dispatchers.IO + CoroutineName("trellis-checkpoint-writer")).launch {
        for (write in queue) {
            if (failure == null) {
                try {
                    store.append(lease(), write.record)
                } catch (e: Throwable) {
                    failure = e
                }
            }
            write.stored.complete(Unit)
        }
    }
}
