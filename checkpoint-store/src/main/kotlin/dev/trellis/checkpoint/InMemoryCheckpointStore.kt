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
 * @param clock the time source for lease expiry; tests pass a clock they can move.
 * @param leaseDuration how long a claim or renewal lasts.
 */
public class InMemoryCheckpointStore @JvmOverloads constructor(
    private val clock: Clock = Clock.systemUTC(),
    private val leaseDuration: Duration = Duration.ofSeconds(30),
) : CheckpointStore {
    private class Run(var row: RunRow) {
        val checkpoints = TreeMap<Long, CheckpointRecord>()
    }

    private val mutex = Mutex()
    private val runs = TreeMap<String, Run>()

    init {
        StoreRules.requireLeaseDuration(leaseDuration)
    }

    override suspend fun claim(runId: String, owner: String): Lease {
        StoreRules.requireRunId(runId)
        StoreRules.requireOwner(owner)
        return mutex.withLock {
            val run = runs.getOrPut(runId) { Run(RunRow(runId, null, null, null, 0, 0, null)) }
            val row = run.row
            StoreRules.checkClaim(runId, owner, row, StoreRules.now(clock))
            val lease = Lease(runId, owner, row.epoch + 1, StoreRules.leaseUntil(clock, leaseDuration))
            run.row = RunRow(runId, row.graphId, owner, lease.expiresAt, lease.epoch, row.latestSequence, row.latestStatus)
            lease
        }
    }

    override suspend fun renew(lease: Lease): Lease = mutex.withLock {
        val run = runs[lease.runId]
        StoreRules.checkWritable(lease, run?.row)
        val row = run!!.row
        val renewed = Lease(lease.runId, lease.owner, lease.epoch, StoreRules.leaseUntil(clock, leaseDuration))
        run.row = RunRow(row.runId, row.graphId, row.owner, renewed.expiresAt, row.epoch, row.latestSequence, row.latestStatus)
        renewed
    }

    override suspend fun release(lease: Lease) {
        mutex.withLock {
            val run = runs[lease.runId] ?: return
            val row = run.row
            if (row.epoch == lease.epoch && row.owner == lease.owner) {
                run.row = RunRow(row.runId, row.graphId, null, null, row.epoch, row.latestSequence, row.latestStatus)
            }
        }
    }

    override suspend fun append(lease: Lease, record: CheckpointRecord) {
        StoreRules.requireSameRun(lease, record)
        mutex.withLock {
            val run = runs[lease.runId]
            StoreRules.checkWritable(lease, run?.row)
            val row = run!!.row
            StoreRules.checkNext(record, row) { it in run.checkpoints }
            run.checkpoints[record.sequence] = record
            run.row = RunRow(
                row.runId, record.graphId, row.owner, row.leaseUntil, row.epoch, record.sequence, record.status,
            )
        }
    }

    override suspend fun latest(runId: String): CheckpointRecord? {
        StoreRules.requireRunId(runId)
        return mutex.withLock { runs[runId]?.checkpoints?.lastEntry()?.value }
    }

    override suspend fun get(runId: String, sequence: Long): CheckpointRecord? {
        StoreRules.requireRunId(runId)
        return mutex.withLock { runs[runId]?.checkpoints?.get(sequence) }
    }

    override suspend fun history(runId: String): List<CheckpointRecord> {
        StoreRules.requireRunId(runId)
        return mutex.withLock { runs[runId]?.checkpoints?.values?.toList() ?: emptyList() }
    }

    override suspend fun runs(): List<RunInfo> = mutex.withLock { runs.values.map { it.row.toInfo() } }

    override suspend fun prune(runId: String, keepLatest: Int): Int {
        StoreRules.requireRunId(runId)
        StoreRules.requireKeepLatest(keepLatest)
        return mutex.withLock {
            val run = runs[runId] ?: return@withLock 0
            val entries = run.checkpoints.values.map { PruneEntry(it.sequence, it.parentSequence, it.kind) }
            val doomed = StoreRules.prunable(entries, keepLatest)
            doomed.forEach { run.checkpoints.remove(it) }
            doomed.size
        }
    }

    override suspend fun delete(runId: String) {
        StoreRules.requireRunId(runId)
        mutex.withLock { runs.remove(runId) }
    }

    override fun toString(): String = "InMemoryCheckpointStore"
}
