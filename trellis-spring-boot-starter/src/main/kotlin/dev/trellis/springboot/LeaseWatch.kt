package dev.trellis.springboot

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicReference

/**
 * The application's checkpoint store, watched: it passes every call on and notes the leases the runs hold and how
 * their renewals go, for the health indicator ([TrellisHealthIndicator]).
 */
internal class LeaseWatch(private val store: CheckpointStore) : CheckpointStore by store {
    /** The runs holding a lease now, with the time each lease was last claimed or renewed. */
    private val held = ConcurrentHashMap<String, Instant>()

    private val lastFailure = AtomicReference<Failure?>()

    /** A renewal that failed: when, of which run, why. */
    class Failure(val at: Instant, val runId: String, val error: Exception)

    /** The runs holding a lease, with the time each was last claimed or renewed. */
    val leases: Map<String, Instant> get() = HashMap(held)

    /** The last renewal that failed, unless a renewal of the same run succeeded since. */
    val failure: Failure? get() = lastFailure.get()

    override suspend fun claim(runId: String, owner: String): Lease =
        store.claim(runId, owner).also { held[runId] = Instant.now() }

    override suspend fun renew(lease: Lease): Lease {
        try {
            return store.renew(lease).also {
                held[lease.runId] = Instant.now()
                lastFailure.getAndUpdate { failed -> if (failed?.runId == lease.runId) null else failed }
            }
        } catch (e: Exception) {
            lastFailure.set(Failure(Instant.now(), lease.runId, e))
            throw e
        }
    }

    override suspend fun release(lease: Lease) {
        try {
            store.release(lease)
        } finally {
            held.remove(lease.runId)
            lastFailure.getAndUpdate { failed -> if (failed?.runId == lease.runId) null else failed }
        }
    }

    override fun close() = store.close()

    override fun toString(): String = store.toString()
}
