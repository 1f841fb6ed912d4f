package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.internal.RunRow
import dev.trellis.checkpoint.internal.StoreRules
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.sql.Connection
import java.sql.Statement
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger

/**
 * Group commit of checkpoint appends (`docs/persistence-stores.md`, "Group commit"). An append that finds no
 * transaction in flight and none waiting is written at once, alone. The others queue here, and one writer at a time
 * takes every append queued while the previous transaction committed — at most one per run, in
 * the order each run appended — and writes them in one transaction: it locks the batch's run rows (in run id order,
 * so two writers never deadlock), checks each append's lease epoch and parent as a lone append would, inserts the
 * accepted checkpoints and moves their runs' latest sequence, and commits. Each caller returns when its batch
 * committed, or throws its own refusal ([dev.trellis.checkpoint.FencedOutException],
 * [dev.trellis.checkpoint.CheckpointConflictException]) without failing the others. When the batch's transaction
 * fails as a whole (a constraint, a lost connection), it was rolled back, and each of its appends is retried alone
 * ([appendAlone]) so that a bad one fails alone.
 *
 * A caller cancelled while its append waits in the queue withdraws it (it is never written); one cancelled while
 * its batch is being written waits for that batch to end, like a lone append waits for its transaction.
 */
internal class GroupCommit(
    private val engine: JdbcEngine,
    /** Appends in a transaction of its own; the flag says whether the record may be stored already (a failed batch). */
    private val appendAlone: suspend (Lease, CheckpointRecord, Boolean) -> Unit,
) {
    private class Pending(val lease: Lease, val record: CheckpointRecord) {
        val state = AtomicInteger(QUEUED)
        val done = CompletableDeferred<Unit>()
    }

    private val runs = engine.runsTable
    private val checkpoints = engine.checkpointsTable
    private val queue = ConcurrentLinkedQueue<Pending>()
    private val writing = AtomicBoolean(false)
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.IO + CoroutineName("trellis-group-commit"))

    /** Appends left for a later batch (a second append of a run already in the batch, or a full batch); writer only. */
    private val carried = ArrayDeque<Pending>()

    @Volatile
    private var closed = false

    /** Appends [record] with the next batch; returns once that batch committed. */
    suspend fun append(lease: Lease, record: CheckpointRecord) {
        if (closed) return appendAlone(lease, record, false)
        if (queue.isEmpty() && writing.compareAndSet(false, true)) {
            // Nothing in flight and nothing waiting: written at once, alone, as without group commit; appends that
            // arrive meanwhile wait for the next batch.
            try {
                appendAlone(lease, record, false)
            } finally {
                writing.set(false)
                if (queue.isNotEmpty() && writing.compareAndSet(false, true)) scope.launch { drain() }
            }
            return
        }
        val pending = Pending(lease, record)
        queue.add(pending)
        if (writing.compareAndSet(false, true)) scope.launch { drain() }
        try {
            pending.done.await()
        } catch (e: CancellationException) {
            if (pending.state.compareAndSet(QUEUED, WITHDRAWN)) throw e
            withContext(NonCancellable) { pending.done.join() }
            throw e
        }
    }

    /** Later appends are written alone; the queued ones are still written. */
    fun close() {
        closed = true
    }

    private suspend fun drain() {
        while (true) {
            val batch = take()
            if (batch.isEmpty()) {
                writing.set(false)
                // An append queued after take() and before set(false) saw a writer and launched none: go on for it.
                if (queue.isEmpty() || !writing.compareAndSet(false, true)) return
                continue
            }
            write(batch)
        }
    }

    private fun take(): List<Pending> {
        while (true) carried.addLast(queue.poll() ?: break)
        val batch = ArrayList<Pending>(minOf(carried.size, MAX_BATCH))
        val inBatch = HashSet<String>()
        val left = ArrayList<Pending>()
        for (p in carried) {
            if (p.state.get() == WITHDRAWN) continue
            if (batch.size < MAX_BATCH && inBatch.add(p.record.runId)) {
                if (p.state.compareAndSet(QUEUED, TAKEN)) batch += p
            } else {
                left += p
            }
        }
        carried.clear()
        carried.addAll(left)
        return batch
    }

    private suspend fun write(batch: List<Pending>) {
        val refused = arrayOfNulls<CheckpointStoreException>(batch.size)
        try {
            engine.transaction { c -> writeAll(c, batch, refused) }
        } catch (_: Exception) {
            // Rolled back as a whole (or its answer lost): each append alone, so that the one that broke it fails
            // alone, all at once, so that a database that is away for a while is waited for once, not once each.
            // An append whose batch did commit finds its checkpoint stored (appendAlone).
            coroutineScope {
                for (p in batch) {
                    launch {
                        try {
                            appendAlone(p.lease, p.record, true)
                            p.done.complete(Unit)
                        } catch (e: Throwable) {
                            p.done.completeExceptionally(e)
                        }
                    }
                }
            }
            return
        }
        for ((i, p) in batch.withIndex()) {
            val refusal = refused[i]
            if (refusal == null) p.done.complete(Unit) else p.done.completeExceptionally(refusal)
        }
    }

    private fun writeAll(c: Connection, batch: List<Pending>, refused: Array<CheckpointStoreException?>) {
        val rows = lockRows(c, batch.map { it.lease.runId }.sorted())
        val parents = existingParents(c, batch, rows)
        for ((i, p) in batch.withIndex()) {
            try {
                val row = rows[p.lease.runId]
                StoreRules.checkWritable(p.lease, row)
                StoreRules.checkNext(p.record, row!!) { parent -> parents(p.record.runId, parent) }
            } catch (e: CheckpointStoreException) {
                refused[i] = e
            }
        }
        val accepted = batch.filterIndexed { i, _ -> refused[i] == null }
        if (accepted.isEmpty()) return
        c.prepareStatement(insertRecordSql(checkpoints)).use { statement ->
            for (p in accepted) {
                bindRecord(statement, p.record)
                statement.addBatch()
            }
            statement.executeBatch()
        }
        c.prepareStatement(updateLatestSql(runs)).use { statement ->
            for (p in accepted) {
                bindLatest(statement, p.record, p.lease.epoch)
                statement.addBatch()
            }
            val counts = statement.executeBatch()
            check(counts.all { it == 1 || it == Statement.SUCCESS_NO_INFO }) {
                "A run changed while a batch of ${accepted.size} checkpoints was appended."
            }
        }
    }

    /** Locks the rows of [runIds] (sorted), in that order. */
    private fun lockRows(c: Connection, runIds: List<String>): Map<String, RunRow> {
        val rows = HashMap<String, RunRow>(runIds.size * 2)
        if (engine.arrayParameters) {
            c.prepareStatement(
                "SELECT $RUN_COLUMNS FROM $runs WHERE run_id = ANY(?) ORDER BY run_id${engine.lockRow}",
            ).use { statement ->
                statement.setArray(1, c.createArrayOf("text", runIds.toTypedArray()))
                statement.executeQuery().use { rs -> while (rs.next()) runRow(rs).let { rows[it.runId] = it } }
            }
        } else {
            c.prepareStatement("SELECT $RUN_COLUMNS FROM $runs WHERE run_id = ?${engine.lockRow}").use { statement ->
                for (runId in runIds) {
                    statement.setString(1, runId)
                    statement.executeQuery().use { rs -> if (rs.next()) rows[runId] = runRow(rs) }
                }
            }
        }
        return rows
    }

    /**
     * Which parents named by [batch] are stored. A parent that is its run's latest checkpoint is: pruning always keeps
     * the latest one. The others take one query for the batch where the database takes arrays, one each otherwise.
     */
    private fun existingParents(
        c: Connection,
        batch: List<Pending>,
        rows: Map<String, RunRow>,
    ): (String, Long) -> Boolean {
        fun latest(runId: String, sequence: Long) = sequence > 0 && rows[runId]?.latestSequence == sequence
        val exists = "SELECT 1 FROM $checkpoints WHERE run_id = ? AND sequence = ?"
        if (!engine.arrayParameters) {
            return { runId, sequence ->
                latest(runId, sequence) || c.prepareStatement(exists).use { statement ->
                    statement.setString(1, runId)
                    statement.setLong(2, sequence)
                    statement.executeQuery().use { it.next() }
                }
            }
        }
        val named = batch.filter { p -> p.record.parentSequence?.let { !latest(p.record.runId, it) } ?: false }
        if (named.isEmpty()) return ::latest
        val found = HashSet<Pair<String, Long>>()
        c.prepareStatement(
            "SELECT c.run_id, c.sequence FROM unnest(?::text[], ?::bigint[]) AS p(run_id, sequence) " +
                "JOIN $checkpoints c ON c.run_id = p.run_id AND c.sequence = p.sequence",
        ).use { statement ->
            statement.setArray(1, c.createArrayOf("text", named.map { it.record.runId }.toTypedArray()))
            statement.setArray(2, c.createArrayOf("bigint", named.map { it.record.parentSequence }.toTypedArray()))
            statement.executeQuery().use { rs -> while (rs.next()) found += rs.getString(1) to rs.getLong(2) }
        }
        return { runId, sequence -> latest(runId, sequence) || (runId to sequence) in found }
    }

    private companion object {
        const val QUEUED = 0
        const val TAKEN = 1
        const val WITHDRAWN = 2

        /** The most appends one transaction writes. */
        const val MAX_BATCH = 256
    }
}
