package dev.trellis.fleet

import kotlinx.coroutines.CoroutineDispatcher
import java.lang.management.ManagementFactory
import java.time.Duration
import java.util.UUID

/**
 * How a [FleetWorker] works: its [schema] and id, how many runs it runs at once ([concurrency]), its lease and
 * heartbeat, how it finds work ([listen], [pollInterval]) and how long finished runs are kept ([retention]).
 *
 * ```kotlin
 * FleetWorkerOptions(concurrency = 32, leaseDuration = Duration.ofSeconds(10))
 * ```
 */
public class FleetWorkerOptions @JvmOverloads constructor(
    /** The PostgreSQL schema of the queue and of the checkpoint store (`PostgresCheckpointStore`'s schema). */
    public val schema: String = "trellis",
    /** This worker's id: unique to the process and its incarnation; the queue and the store record it as owner. */
    public val workerId: String = defaultWorkerId(),
    /** How many runs it runs at once, at most. */
    public val concurrency: Int = 16,
    /**
     * How long a claim lasts without a heartbeat: a worker that dies or stalls longer loses its runs to other workers.
     * Also the checkpoint store's lease duration.
     */
    public val leaseDuration: Duration = Duration.ofSeconds(30),
    /** How often the heartbeat thread extends the leases of the worker's runs; a third of [leaseDuration] when null. */
    public val heartbeatInterval: Duration? = null,
    /** How often it looks for work when no notification came (the fallback of [listen]). */
    public val pollInterval: Duration = Duration.ofSeconds(1),
    /** Whether it listens for submissions (`LISTEN`/`NOTIFY`) to claim new runs at once. */
    public val listen: Boolean = true,
    /** How long finished (COMPLETED, FAILED) runs are kept before the worker deletes them; null keeps them. */
    public val retention: Duration? = null,
    /** Where the runs' nodes run; null for the runtime's default. */
    public val dispatcher: CoroutineDispatcher? = null,
    /** Told what the worker does; null for nobody. */
    public val observer: FleetObserver? = null,
    /**
     * Whether the checkpoint appends of the worker's runs share transactions (`PostgresCheckpointStore`'s
     * `groupCommit`): as durable as one transaction each, far fewer commits with many runs at once.
     */
    public val groupCommit: Boolean = true,
    /**
     * How long the worker's database operations (its checkpoint store's and the queue's) retry faults that pass —
     * a lost connection, a server restarting or failing over — before they give up
     * (`CheckpointStoreUnavailableException`). A run that meets one goes back to the queue; the worker itself keeps
     * going (`docs/scale-out.md`, "Faults").
     */
    public val unavailableAfter: Duration = Duration.ofSeconds(30),
) {
    init {
        require(concurrency >= 1) { "concurrency must be at least 1, but was $concurrency." }
        require(!leaseDuration.isNegative && leaseDuration >= Duration.ofMillis(MIN_LEASE_MILLIS)) {
            "leaseDuration must be at least $MIN_LEASE_MILLIS ms, but was $leaseDuration."
        }
        require(heartbeatInterval == null || (!heartbeatInterval.isNegative && heartbeatInterval < leaseDuration)) {
            "heartbeatInterval must be positive and shorter than leaseDuration ($leaseDuration), but was $heartbeatInterval."
        }
        require(
            !pollInterval.isNegative && !pollInterval.isZero,
        ) { "pollInterval must be positive, but was $pollInterval." }
        require(retention == null || !retention.isNegative) { "retention must not be negative, but was $retention." }
        require(workerId.isNotBlank()) { "workerId must not be blank." }
        require(!unavailableAfter.isNegative) { "unavailableAfter must not be negative, but was $unavailableAfter." }
    }

    /** The heartbeat period in effect. */
    public val heartbeat: Duration get() = heartbeatInterval ?: leaseDuration.dividedBy(HEARTBEATS_PER_LEASE)

    private companion object {
        const val MIN_LEASE_MILLIS = 500L
        const val HEARTBEATS_PER_LEASE = 3L

        fun defaultWorkerId(): String =
            "${ManagementFactory.getRuntimeMXBean().name}/${UUID.randomUUID().toString().take(8)}"
    }
}
