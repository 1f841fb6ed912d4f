package dev.trellis.checkpoint

import dev.trellis.checkpoint.internal.PruneEntry
import dev.trellis.checkpoint.internal.RunRow
import dev.trellis.checkpoint.internal.StoreRules
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import java.time.Clock
import java.time.Duration
import java.util.TreeMap

/**
 * A [CheckpointStore] that keeps everything in this JVM's memory: for tests and for runs that need no durability.
 *
 * It follows the same lease, fencing, sequence and prune rules as the persistent stores. All operations take one
 * [Mutex], so the store is safe to share between coroutines and threads.
 *
 * **Retention.** It keeps at most [maxRuns] runs (default [DEFAULT_MAX_RUNS]), so a long-lived process that checkpoints
 * every run does not grow without bound. When a claim adds a run beyond that, the store forgets the run written least
 * recently among those nobody holds a live lease on — ended runs (`COMPLETED`, `FAILED`) first, then paused or
 * crashed ones (`INTERRUPTED`, `DRAINED`, `RUNNING` without a live lease). A run whose writer holds its lease is never
 * dropped, so the limit may be exceeded while more than [maxRuns] runs are running at once. Raise the limit (or pass
 * [Int.MAX_VALUE]) when paused runs must wait longer, or use a persistent store.
 *
 * ```kotlin
 * val store = InMemoryCheckpointStore(maxRuns = 100)   // Java: new InMemoryCheckpointStore(100)
 * ```
 *
 * @param clock the time source for lease expiry; tests pass a clock they can move.
 * @param leaseDuration how long a claim or renewal lasts.
 * @param maxRuns the most runs kept; see Retention above.
 */
public class InMemoryCheckpointStore @JvmOverloads constructor(
    private val clock: Clock = Clock.systemUTC(),
    private val leaseDuration: Duration = Duration.ofSeconds(30),
    /** The most runs the store keeps; see Retention in the class documentation. */
    public val maxRuns: Int = DEFAULT_MAX_RUNS,
) : CheckpointStore {
    /** A store keeping at most [maxRuns] runs, with the system clock and 30-second leases. */
    public constructor(maxRuns: Int) : this(Clock.systemUTC(), Duration.ofSeconds(30), maxRuns)

    private class Run(var row: RunRow) {
        /**
         * The run's checkpoints in sequence order. An append is the next sequence, so it goes last; a prune leaves
         * gaps, so a sequence is looked up by binary search.
         */
        val checkpoints = ArrayList<CheckpointRecord>()

        operator fun get(sequence: Long): CheckpointRecord? {
            var low = 0
            var high = checkpoints.size - 1
            while (low <= high) {
                val mid = (low + high) ushr 1
                val record = checkpoints[mid]
                when {
                    record.sequence < sequence -> low = mid + 1
                    record.sequence > sequence -> high = mid - 1
                    else -> return record
                }
            }
            return null
        }
    }

    private val mutex = Mutex()
    private val runs = TreeMap<String, Run>()

    /**
     * The runs in the order they were last claimed or written, least recent first: in access order, so that a
     * [touch] moves a run to the end without removing and adding it again.
     */
    private val recency = LinkedHashMap<String, Run>(16, 0.75f, true)

    init {
        StoreRules.requireLeaseDuration(leaseDuration)
        require(maxRuns >= 1) { "maxRuns must be at least 1, but was $maxRuns; pass Int.MAX_VALUE to keep every run." }
    }

    override suspend fun claim(runId: String, owner: String): Lease {
        StoreRules.requireRunId(runId)
        StoreRules.requireOwner(owner)
        return mutex.withLock {
            val known = runs[runId]
            val run = known ?: Run(RunRow(runId, null, null, null, 0, 0, null, StoreRules.now(clock)))
            val row = run.row
            StoreRules.checkClaim(runId, owner, row, StoreRules.now(clock))
            val lease = Lease(runId, owner, row.epoch + 1, StoreRules.leaseUntil(clock, leaseDuration))
            run.row =
                RunRow(
                    runId,
                    row.graphId,
                    owner,
                    lease.expiresAt,
                    lease.epoch,
                    row.latestSequence,
                    row.latestStatus,
                    row.createdAt,
                )
            runs[runId] = run
            touch(runId, run)
            if (known == null && runs.size > maxRuns) evict()
            lease
        }
    }

    /** The run [touch] moved to the end of [recency] last: touching it again changes nothing. */
    private var lastTouched: Run? = null

    private fun touch(runId: String, run: Run) {
        if (run === lastTouched) return
        recency[runId] = run
        lastTouched = run
    }

    /** Forgets runs until at most [maxRuns] are left, or only runs with a live lease are (see Retention). */
    private fun evict() {
        val now = StoreRules.now(clock)
        while (runs.size > maxRuns) {
            val victim = oldest(now) { it == "COMPLETED" || it == "FAILED" } ?: oldest(now) { true } ?: return
            if (runs.remove(victim) === lastTouched) lastTouched = null
            recency.remove(victim)
        }
    }

    private inline fun oldest(now: java.time.Instant, status: (String?) -> Boolean): String? {
        for ((runId, run) in recency) {
            val row = run.row
            val leased = row.owner != null && row.leaseUntil != null && row.leaseUntil.isAfter(now)
            if (!leased && status(row.latestStatus)) return runId
        }
        return null
    }

    override suspend fun renew(lease: Lease): Lease = mutex.withLock {
        val run = runs[lease.runId]
        StoreRules.checkWritable(lease, run?.row)
        val row = run!!.row
        val renewed = Lease(lease.runId, lease.owner, lease.epoch, StoreRules.leaseUntil(clock, leaseDuration))
        run.row =
            RunRow(
                row.runId,
                row.graphId,
                row.owner,
                renewed.expiresAt,
                row.epoch,
                row.latestSequence,
                row.latestStatus,
                row.createdAt,
            )
        renewed
    }

    override suspend fun release(lease: Lease) {
        mutex.withLock {
            val run = runs[lease.runId] ?: return
            val row = run.row
            if (row.epoch == lease.epoch && row.owner == lease.owner) {
                run.row = RunRow(
                    row.runId,
                    row.graphId,
                    null,
                    null,
                    row.epoch,
                    row.latestSequence,
                    row.latestStatus,
                    row.createdAt,
                )
            }
        }
    }

    override suspend fun append(lease: Lease, record: CheckpointRecord) {
        StoreRules.requireSameRun(lease, record)
        mutex.withLock {
            val run = runs[lease.runId]
            StoreRules.checkWritable(lease, run?.row)
            val row = run!!.row
            StoreRules.checkNext(record, row) { run[it] != null }
            run.checkpoints += record
            touch(lease.runId, run)
            run.row = RunRow(
                row.runId,
                record.graphId,
                row.owner,
                row.leaseUntil,
                row.epoch,
                record.sequence,
                record.status,
                row.createdAt,
            )
        }
    }

    override suspend fun latest(runId: String): CheckpointRecord? {
        StoreRules.requireRunId(runId)
        return mutex.withLock { runs[runId]?.checkpoints?.lastOrNull() }
    }

    override suspend fun get(runId: String, sequence: Long): CheckpointRecord? {
        StoreRules.requireRunId(runId)
        return mutex.withLock { runs[runId]?.get(sequence) }
    }

    override suspend fun history(runId: String): List<CheckpointRecord> {
        StoreRules.requireRunId(runId)
        return mutex.withLock { runs[runId]?.checkpoints?.toList() ?: emptyList() }
    }

    override suspend fun runs(): List<RunInfo> = mutex.withLock { runs.values.map { it.row.toInfo() } }

    override suspend fun prune(runId: String, keepLatest: Int): Int {
        StoreRules.requireRunId(runId)
        StoreRules.requireKeepLatest(keepLatest)
        return mutex.withLock {
            val run = runs[runId] ?: return@withLock 0
            val entries = run.checkpoints.map { PruneEntry(it.sequence, it.parentSequence, it.kind) }
            val doomed = StoreRules.prunable(entries, keepLatest)
            run.checkpoints.removeIf { it.sequence in doomed }
            doomed.size
        }
    }

    override suspend fun delete(runId: String) {
        StoreRules.requireRunId(runId)
        mutex.withLock {
            if (runs.remove(runId) === lastTouched) lastTouched = null
            recency.remove(runId)
        }
    }

    override fun toString(): String = "InMemoryCheckpointStore(maxRuns=$maxRuns)"

    /** Defaults. */
    public companion object {
        /** How many runs a store keeps unless told otherwise. */
        public const val DEFAULT_MAX_RUNS: Int = 1_000
    }
}
