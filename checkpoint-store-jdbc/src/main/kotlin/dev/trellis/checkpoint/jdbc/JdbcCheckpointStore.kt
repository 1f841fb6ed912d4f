package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.InternalStoreApi
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunInfo
import dev.trellis.checkpoint.RunQuery
import dev.trellis.checkpoint.UnreadableCheckpointException
import dev.trellis.checkpoint.internal.RunRow
import dev.trellis.checkpoint.internal.StoreRules
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import java.sql.Connection
import java.sql.ResultSet
import java.sql.SQLException
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference

/**
 * The [CheckpointStore] rules in SQL, shared by the SQLite and PostgreSQL stores. Every write locks the run's row
 * first (the engine's [JdbcEngine.lockRow]; SQLite's `BEGIN IMMEDIATE` locks the whole file), so check and write
 * happen in one transaction. The public stores delegate to it; applications use those, not this class.
 */
@InternalStoreApi
public class JdbcCheckpointStore(
    private val engine: JdbcEngine,
    /** The clock of lease expiry; `null` for the database's clock ([JdbcEngine.nowMillisQuery]). */
    private val clock: Clock?,
    private val leaseDuration: Duration,
    /**
     * Whether concurrent appends share transactions (group commit): one writer takes every append queued while its
     * previous transaction committed and writes them in one; each caller returns once its batch committed.
     */
    groupCommit: Boolean = false,
    /**
     * How long an operation retries a fault that passes (a lost connection, a restarting server, a locked file:
     * [TransientFaults]) before it throws [dev.trellis.checkpoint.CheckpointStoreUnavailableException].
     */
    private val unavailableAfter: Duration = TransientFaults.DEFAULT_UNAVAILABLE_AFTER,
) : CheckpointStore {
    private val runs = engine.runsTable
    private val checkpoints = engine.checkpointsTable
    private val insertSql = insertRecordSql(checkpoints)
    private val updateLatestSql = updateLatestSql(runs)
    private val advanceLatestSql = advanceLatestSql(runs)
    private val appendNextSql = appendNextSql(runs, checkpoints)
    private val createRunSql =
        "INSERT INTO $runs (run_id, epoch, latest_sequence, created_at) VALUES (?, 0, 0, ?) " +
            "ON CONFLICT (run_id) DO NOTHING"
    private val grantSql = "UPDATE $runs SET owner = ?, lease_until = ?, epoch = ? WHERE run_id = ?"
    private val releaseSql =
        "UPDATE $runs SET owner = NULL, lease_until = NULL WHERE run_id = ? AND epoch = ? AND owner = ?"
    private val latestSql = "SELECT $RECORD_COLUMNS FROM $checkpoints WHERE run_id = ? ORDER BY sequence DESC LIMIT 1"
    private val lockRunSql = "SELECT $RUN_COLUMNS FROM $runs WHERE run_id = ?${engine.lockRow}"
    private val existsSql = "SELECT 1 FROM $checkpoints WHERE run_id = ? AND sequence = ?"
    private val storedSql = "SELECT $RECORD_COLUMNS FROM $checkpoints WHERE run_id = ? AND sequence = ?"
    private val groupCommit = if (groupCommit) GroupCommit(engine, ::appendAlone) else null

    init {
        StoreRules.requireLeaseDuration(leaseDuration)
        TransientFaults.requireBound(unavailableAfter)
        require(clock != null || engine.nowMillisQuery != null) {
            "${engine.description} has no clock of its own; pass the clock lease expiry is measured with."
        }
    }

    /** Now, by the store's clock or else the database's, to the millisecond. */
    private fun now(c: Connection): Instant {
        if (clock != null) return StoreRules.now(clock)
        return c.prepareStatement(engine.nowMillisQuery!!).use { statement ->
            statement.executeQuery().use { rs ->
                rs.next()
                Instant.ofEpochMilli(rs.getLong(1))
            }
        }
    }

    /**
     * Claims in one transaction. When the caller is cancelled while the claim commits (a blocking JDBC call cannot
     * be stopped halfway), the committed lease is released before the cancellation goes on, so a cancelled claim
     * never leaves the run owned by nobody alive until the lease expires.
     */
    override suspend fun claim(runId: String, owner: String): Lease {
        StoreRules.requireRunId(runId)
        StoreRules.requireOwner(owner)
        val granted = AtomicReference<Lease?>()
        try {
            return claimOnce(runId, owner, granted)
        } catch (e: CancellationException) {
            val lease = granted.get()
            if (lease != null) {
                withContext(NonCancellable) {
                    try {
                        release(lease)
                    } catch (failure: CheckpointStoreException) {
                        e.addSuppressed(failure)
                    }
                }
            }
            throw e
        }
    }

    private suspend fun claimOnce(runId: String, owner: String, granted: AtomicReference<Lease?>): Lease =
        shortWrite({ "claim" }, runId) { c ->
            val now = now(c)
            engine.withStatement(c, createRunSql) {
                it.setString(1, runId)
                it.setLong(2, now.toEpochMilli())
                it.executeUpdate()
            }
            val row = checkNotNull(lockRun(c, runId)) { "Run '$runId' vanished while it was being claimed." }
            StoreRules.checkClaim(runId, owner, row, now)
            val lease = Lease(runId, owner, row.epoch + 1, now.plus(leaseDuration))
            // Recorded before the commit: released again if the caller was cancelled meanwhile (see claim).
            granted.set(lease)
            engine.withStatement(c, grantSql) {
                it.setString(1, owner)
                it.setLong(2, lease.expiresAt.toEpochMilli())
                it.setLong(3, lease.epoch)
                it.setString(4, runId)
                it.executeUpdate()
            }
            lease
        }

    override suspend fun renew(lease: Lease): Lease = write("renew the lease of", lease.runId) { c ->
        StoreRules.checkWritable(lease, lockRun(c, lease.runId))
        val renewed = Lease(lease.runId, lease.owner, lease.epoch, now(c).plus(leaseDuration))
        c.prepareStatement("UPDATE $runs SET lease_until = ? WHERE run_id = ? AND epoch = ?").use {
            it.setLong(1, renewed.expiresAt.toEpochMilli())
            it.setString(2, lease.runId)
            it.setLong(3, lease.epoch)
            it.executeUpdate()
        }
        renewed
    }

    override suspend fun release(lease: Lease) {
        shortWrite({ "release" }, lease.runId) { c ->
            engine.withStatement(c, releaseSql) {
                it.setString(1, lease.runId)
                it.setLong(2, lease.epoch)
                it.setString(3, lease.owner)
                it.executeUpdate()
            }
        }
    }

    override suspend fun append(lease: Lease, record: CheckpointRecord) {
        StoreRules.requireSameRun(lease, record)
        val batcher = groupCommit
        if (batcher != null) batcher.append(lease, record) else appendAlone(lease, record, mayBeStored = false)
    }

    /**
     * Appends [record] in a transaction of its own: the path without group commit, and a failed batch's retry.
     *
     * The usual append — the lease still holds the run, the record is the next sequence and continues the latest
     * checkpoint or starts afresh — is checked by the update of the run row itself ([advanceLatestSql]): one
     * statement instead of a select of the row and an update. Where the engine runs it ([JdbcEngine.updateAlone],
     * PostgreSQL), that update and the insert are one statement ([appendNextSql]) sent in one round trip and committed
     * on its own. When the update changes no row, the run row is selected and checked as [StoreRules] does, in a
     * transaction, which throws the same exception with the same message as always (or, for a record whose parent is
     * further back, finds it stored and appends).
     *
     * An append whose commit went through but whose answer was lost (the connection cut after `COMMIT` was sent) is
     * tried again and finds the very record stored at its sequence ([storedAlready]): it succeeded, and nothing more
     * is written. Only a retry looks (or, with [mayBeStored], a batch's append written alone after the batch failed):
     * a caller appending a stored record again gets the conflict.
     */
    internal suspend fun appendAlone(lease: Lease, record: CheckpointRecord, mayBeStored: Boolean = false) {
        val attempts = AtomicInteger()
        val next = continuesLatest(record)
        reporting({ "append checkpoint ${record.sequence} to" }, record.runId) {
            val lookFirst = attempts.getAndIncrement() > 0 || mayBeStored
            val alone = if (next) engine.updateAlone(appendNextSql) { bindAppendNext(it, record, lease) } else null
            if (alone != 1) {
                engine.shortTransaction { c -> appendChecked(c, lease, record, lookFirst, advance = alone == null) }
            }
        }
    }

    /**
     * The append's transaction: [advanceLatest] first when [advance], else (or when it changed nothing) the run row
     * locked and checked, then the insert; with [lookFirst], a record found stored already counts as appended.
     */
    private fun appendChecked(
        c: Connection,
        lease: Lease,
        record: CheckpointRecord,
        lookFirst: Boolean,
        advance: Boolean,
    ) {
        if (!advance || !advanceLatest(c, lease, record)) {
            val row = lockRun(c, lease.runId)
            if (lookFirst && row != null && row.latestSequence >= record.sequence && storedAlready(c, record)) return
            StoreRules.checkWritable(lease, row)
            StoreRules.checkNext(record, row!!) { parent -> exists(c, record.runId, parent) }
            val updated = engine.withStatement(c, updateLatestSql) {
                bindLatest(it, record, lease.epoch)
                it.executeUpdate()
            }
            check(updated == 1) {
                "Run '${record.runId}' changed while checkpoint ${record.sequence} was appended."
            }
        }
        insert(c, record)
    }

    /**
     * Moves the run's latest checkpoint to [record] if [lease] holds the run (its epoch and owner), [record] is the
     * next sequence and its parent is the latest checkpoint or none; `false`, changing nothing, otherwise. A record
     * naming an older parent is left to the full checks (the parent must be looked up).
     */
    private fun advanceLatest(c: Connection, lease: Lease, record: CheckpointRecord): Boolean {
        if (!continuesLatest(record)) return false
        return engine.withStatement(c, advanceLatestSql) {
            bindAdvance(it, record, lease)
            it.executeUpdate()
        } == 1
    }

    /** Whether the checkpoint stored at [record]'s sequence is [record] itself (written by an earlier attempt). */
    private fun storedAlready(c: Connection, record: CheckpointRecord): Boolean {
        val stored = try {
            engine.withStatement(c, storedSql) { statement ->
                statement.setString(1, record.runId)
                statement.setLong(2, record.sequence)
                statement.executeQuery().use { rs -> if (rs.next()) record(rs) else null }
            }
        } catch (_: UnreadableCheckpointException) {
            null
        }
        return stored != null && stored.payload == record.payload && stored.status == record.status &&
            stored.kind == record.kind && stored.parentSequence == record.parentSequence &&
            stored.createdAt == record.createdAt && stored.metadata == record.metadata
    }

    override suspend fun latest(runId: String): CheckpointRecord? {
        StoreRules.requireRunId(runId)
        return shortWrite({ "read the latest checkpoint of" }, runId) { c ->
            engine.withStatement(c, latestSql) { statement ->
                statement.setString(1, runId)
                statement.executeQuery().use { rs -> if (rs.next()) record(rs) else null }
            }
        }
    }

    override suspend fun get(runId: String, sequence: Long): CheckpointRecord? {
        StoreRules.requireRunId(runId)
        return read("read checkpoint $sequence of", runId) { c ->
            selectRecords(c, checkpoints, engine.description, "WHERE run_id = ? AND sequence = ?") {
                it.setString(1, runId)
                it.setLong(2, sequence)
            }.firstOrNull()
        }
    }

    override suspend fun history(runId: String): List<CheckpointRecord> {
        StoreRules.requireRunId(runId)
        return read("read the history of", runId) { c ->
            c.prepareStatement("SELECT $RECORD_COLUMNS FROM $checkpoints WHERE run_id = ? ORDER BY sequence").use {
                it.setString(1, runId)
                it.executeQuery().use { rs -> readableRecords(rs, engine.description) }
            }
        }
    }

    override suspend fun runs(): List<RunInfo> = read("list the runs", null) { c -> c.selectRuns(runs) }

    override suspend fun run(runId: String): RunInfo? = read("read the run", runId) { c -> c.selectRun(runs, runId) }

    override suspend fun runs(query: RunQuery): List<RunInfo> =
        read("list the runs", null) { c -> c.selectRuns(runs, query) }

    override suspend fun prune(runId: String, keepLatest: Int): Int {
        StoreRules.requireRunId(runId)
        StoreRules.requireKeepLatest(keepLatest)
        return write("prune", runId) { c ->
            lockRun(c, runId) ?: return@write 0
            val entries = c.pruneEntries(checkpoints, runId)
            val doomed = StoreRules.prunable(entries, keepLatest)
            if (doomed.isNotEmpty()) {
                c.prepareStatement("DELETE FROM $checkpoints WHERE run_id = ? AND sequence = ?").use { statement ->
                    for (sequence in doomed.sorted()) {
                        statement.setString(1, runId)
                        statement.setLong(2, sequence)
                        statement.addBatch()
                    }
                    statement.executeBatch()
                }
            }
            doomed.size
        }
    }

    override suspend fun delete(runId: String) {
        StoreRules.requireRunId(runId)
        write("delete", runId) { c ->
            lockRun(c, runId) ?: return@write
            for (table in listOf(checkpoints, runs)) {
                c.prepareStatement("DELETE FROM $table WHERE run_id = ?").use {
                    it.setString(1, runId)
                    it.executeUpdate()
                }
            }
        }
    }

    override fun close() {
        groupCommit?.close()
        engine.close()
    }

    private suspend fun <T> write(action: String, runId: String?, block: (Connection) -> T): T = read(
        action,
        runId,
        block,
    )

    private suspend fun <T> read(action: String, runId: String?, block: (Connection) -> T): T =
        reporting({ action }, runId) { engine.transaction(block) }

    /**
     * [write] through [JdbcEngine.shortTransaction]: for the operations of a run's every start, step and end (claim,
     * the latest checkpoint, append, release), which wait for nothing but the database. [action] is only called to
     * describe a failure.
     */
    private suspend inline fun <T> shortWrite(
        crossinline action: () -> String,
        runId: String,
        noinline block: (Connection) -> T,
    ): T = reporting(action, runId) { engine.shortTransaction(block) }

    /**
     * Runs [transaction]; when it fails with a fault that passes, again on a fresh transaction for up to
     * [unavailableAfter] ([TransientFaults.retryingAfter]), then throws
     * [dev.trellis.checkpoint.CheckpointStoreUnavailableException]. Any other [SQLException] becomes a
     * [CheckpointStoreException] naming [action] and [runId] at once. The first attempt runs with nothing around it:
     * the retry's bookkeeping (its schedule, its callbacks, the message) is made only once an attempt has failed.
     */
    private suspend inline fun <T> reporting(
        crossinline action: () -> String,
        runId: String?,
        crossinline transaction: suspend () -> T,
    ): T {
        try {
            return try {
                transaction()
            } catch (e: Exception) {
                if (e is CancellationException || !engine.isTransient(e)) throw e
                val what = action()
                TransientFaults.retryingAfter(
                    e,
                    unavailableAfter,
                    engine::isTransient,
                    { failure, attempts, waited -> unavailable(engine, what, runId, failure, attempts, waited) },
                ) { transaction() }
            }
        } catch (e: SQLException) {
            val what = action()
            throw storeFailure(engine, if (runId == null) what else "$what run '$runId'", e)
        }
    }

    private fun lockRun(c: Connection, runId: String): RunRow? =
        engine.withStatement(c, lockRunSql) { statement ->
            statement.setString(1, runId)
            statement.executeQuery().use { rs -> if (rs.next()) runRow(rs) else null }
        }

    private fun exists(c: Connection, runId: String, sequence: Long): Boolean =
        engine.withStatement(c, existsSql) { statement ->
            statement.setString(1, runId)
            statement.setLong(2, sequence)
            statement.executeQuery().use { it.next() }
        }

    private fun insert(c: Connection, record: CheckpointRecord) {
        engine.withStatement(c, insertSql) {
            bindRecord(it, record)
            it.executeUpdate()
        }
    }

    private fun record(rs: ResultSet): CheckpointRecord = checkpointRecord(rs, engine.description)

    override fun toString(): String = "JdbcCheckpointStore(${engine.description})"
}
