package dev.trellis.fleet.internal

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import java.util.concurrent.ConcurrentHashMap

/**
 * The worker's checkpoint store: [delegate], except for the runs the worker claimed with their store lease
 * ([StoreLeases]). For those, the runtime's claim gets the lease granted with the queue claim, a read of the latest
 * checkpoint of a run known to have none answers `null` without a query (until the run appends), and the runtime's
 * release is kept for the worker to do in the transaction that records the run's end ([takeRelease]). Every other
 * call, and every call about other runs, goes to [delegate] unchanged.
 */
internal class FleetStore(private val delegate: CheckpointStore) : CheckpointStore by delegate {
    private val granted = ConcurrentHashMap<String, Lease>()
    private val held = ConcurrentHashMap<String, Lease>()
    private val empty = ConcurrentHashMap.newKeySet<String>()
    private val released = ConcurrentHashMap<String, Lease>()

    /** Hands [granted] to the next claim of its run, which from then on is released through [takeRelease]. */
    fun grant(granted: StoreLeases.Granted) {
        val runId = granted.lease.runId
        if (granted.empty) empty += runId
        this.granted[runId] = granted.lease
    }

    /**
     * The lease to release with the run's end, once the run is over: the one the runtime released, or the granted
     * one if the runtime never took it; null when there is none. Forgets the run.
     */
    fun takeRelease(runId: String): Lease? {
        empty -= runId
        held.remove(runId)
        val unused = granted.remove(runId)
        return released.remove(runId) ?: unused
    }

    override suspend fun claim(runId: String, owner: String): Lease {
        val lease = granted[runId]
        if (lease != null && lease.owner == owner && granted.remove(runId, lease)) {
            held[runId] = lease
            return lease
        }
        return delegate.claim(runId, owner)
    }

    override suspend fun latest(runId: String): CheckpointRecord? =
        if (runId in empty) null else delegate.latest(runId)

    override suspend fun append(lease: Lease, record: CheckpointRecord) {
        empty -= lease.runId
        delegate.append(lease, record)
    }

    override suspend fun release(lease: Lease) {
        val kept = held[lease.runId]
        if (kept != null && kept.epoch == lease.epoch && kept.owner == lease.owner && held.remove(lease.runId, kept)) {
            released[lease.runId] = lease
        } else {
            delegate.release(lease)
        }
    }

    override fun toString(): String = delegate.toString()
}
