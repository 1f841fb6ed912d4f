package dev.trellis.bench

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import kotlinx.coroutines.runBlocking
import java.time.Instant

/**
 * A run's traffic to a checkpoint store without the runtime: a claim, [appends] checkpoints of a [payloadChars]-char
 * payload (the first full, the rest deltas), and the release, inside one `runBlocking` — what a run checkpointing
 * every step asks of the store, so that (the run's figure − this one) is the runtime's share.
 */
public object StoreWorkloads {
    /** Claims [runId] in [store], appends [appends] checkpoints and releases it; returns the last sequence. */
    @JvmStatic
    public fun appendRun(store: CheckpointStore, runId: String, appends: Int, payloadChars: Int): Long = runBlocking {
        val payload = "x".repeat(payloadChars)
        val lease = store.claim(runId, "bench")
        val createdAt = Instant.now()
        for (sequence in 1L..appends) {
            store.append(
                lease,
                CheckpointRecord(
                    runId = runId,
                    sequence = sequence,
                    parentSequence = if (sequence == 1L) null else sequence - 1,
                    graphId = "bench",
                    schemaVersion = 1,
                    createdAt = createdAt,
                    status = "RUNNING",
                    kind = if (sequence == 1L) CheckpointRecord.Kind.FULL else CheckpointRecord.Kind.DELTA,
                    payload = payload,
                ),
            )
        }
        store.release(lease)
        appends.toLong()
    }
}
