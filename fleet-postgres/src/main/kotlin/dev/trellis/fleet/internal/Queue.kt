package dev.trellis.fleet.internal

import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.jdbc.TransientFaults
import dev.trellis.fleet.FleetInterrupt
import dev.trellis.fleet.FleetStatus
import dev.trellis.fleet.internal.Tables.Companion.transaction
import java.sql.Connection
import java.time.Duration
import javax.sql.DataSource

/**
 * The queue's SQL on `trellis_fleet_runs`: the workers' claims, heartbeats and recorded ends (the clients' statements
 * are in `QueueRequests.kt`). Blocking JDBC.
 *
 * Every operation runs on a connection of its own, and is tried again on a fresh one while it fails with a fault
 * that passes (a lost connection, a restarting server, a deadlock: [TransientFaults]) for up to [unavailableAfter];
 * then it throws [CheckpointStoreUnavailableException]. A connection that goes silent is dropped after
 * [NETWORK_TIMEOUT_MILLIS]. An operation whose commit went through but whose answer was lost is tried again and
 * finds its own work done ([finish], [submit]); a lost claim's runs are claimed again once their leases expire.
 */
internal class Queue(
    val dataSource: DataSource,
    val tables: Tables,
    private val unavailableAfter: Duration = TransientFaults.DEFAULT_UNAVAILABLE_AFTER,
) {
    val runs = tables.runs

    /** Runs [block] on a connection of its own, retried as the class says. */
    fun <T> connect(block: (Connection) -> T): T = attempts { c, _ -> block(c) }

    /**
     * [connect], telling [block] whether this is a retry (an earlier attempt may have committed before its answer was
     * lost); retried for up to [bound].
     */
    fun <T> attempts(bound: Duration = unavailableAfter, block: (Connection, retry: Boolean) -> T): T =
        tried(bound, ensure = true, block)

    /** [connect] without creating or migrating the tables first: for readers (`QueueReads.kt`). */
    fun <T> connectReading(block: (Connection) -> T): T =
        tried(unavailableAfter, ensure = false) { c, _ -> block(c) }

    private fun <T> tried(bound: Duration, ensure: Boolean, block: (Connection, retry: Boolean) -> T): T =
        TransientFaults.retryingBlocking(bound, ::unavailable) { number ->
            if (ensure) tables.ensure(dataSource)
            dataSource.connection.use { c ->
                c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS)
                block(c, number > 1)
            }
        }

    private fun unavailable(e: Exception, attempts: Int, waited: Duration) = CheckpointStoreUnavailableException(
        store = "PostgreSQL schema ${tables.schema} (the fleet queue)",
        operation = "use the fleet queue",
        runId = null,
        waited = waited,
        message = "The fleet queue in PostgreSQL schema ${tables.schema} stayed unavailable for " +
            "${TransientFaults.words(waited)} ($attempts attempts on fresh connections; the last failed with " +
            "${TransientFaults.describe(e)}). Check that the server is up and reachable; the worker keeps trying, " +
            "and runs whose claims lapsed meanwhile are claimed again.",
        cause = e,
    )

    fun status(c: Connection, runId: String): FleetStatus? =
        c.prepareStatement("SELECT status FROM $runs WHERE run_id = ?").use {
            it.setString(1, runId)
            it.executeQuery().use { rs -> if (rs.next()) FleetStatus.valueOf(rs.getString(1)) else null }
        }

    /**
     * Claims up to [limit] runnable runs of [graphKeys] for [worker]: orphans (RUNNING with an expired lease) first,
     * then QUEUED runs due now, highest priority first. `FOR UPDATE SKIP LOCKED` lets competing workers take
     * different rows without waiting on each other. With [storeLeases], the same transaction claims the runs' store
     * leases too; without [withOrphans], only QUEUED runs.
     */
    fun claim(
        worker: String,
        graphKeys: Array<String>,
        limit: Int,
        leaseMillis: Long,
        storeLeases: StoreLeases? = null,
        withOrphans: Boolean = true,
        running: Array<String> = emptyArray(),
    ): List<Claim> = connect { c ->
        c.transaction {
            val orphans = if (!withOrphans) {
                emptyList()
            } else {
                // Never a run this worker is still running: its lease ran out (a late heartbeat), but it is not lost.
                claimWhere(
                    c,
                    "status = 'RUNNING' AND lease_until < clock_timestamp() AND NOT (run_id = ANY(?))",
                    "lease_until",
                    worker,
                    graphKeys,
                    limit,
                    leaseMillis,
                    running,
                )
            }
            val claims = if (orphans.size >= limit) {
                orphans
            } else {
                orphans + claimWhere(
                    c,
                    "status = 'QUEUED' AND not_before <= clock_timestamp()",
                    "priority DESC, not_before, seq",
                    worker,
                    graphKeys,
                    limit - orphans.size,
                    leaseMillis,
                )
            }
            if (storeLeases != null) {
                val granted = storeLeases.claim(c, claims.map { it.runId }, worker, leaseMillis)
                for (claim in claims) claim.granted = granted[claim.runId]
            }
            claims
        }
    }

    private fun claimWhere(
        c: Connection,
        where: String,
        order: String,
        worker: String,
        graphKeys: Array<String>,
        limit: Int,
        leaseMillis: Long,
        excluded: Array<String>? = null,
    ): List<Claim> = c.prepareStatement(
        // A run taken while RUNNING under a worker's claim is a lost claim: that worker's lease lapsed.
        "UPDATE $runs AS r SET status = 'RUNNING', worker = ?, attempt = r.attempt + 1, " +
            "lease_until = clock_timestamp() + ? * interval '1 millisecond', " +
            "started_at = coalesce(r.started_at, clock_timestamp()), claimed_at = clock_timestamp(), " +
            "heartbeat_at = clock_timestamp(), " +
            "lost_claims = r.lost_claims + CASE WHEN r.status = 'RUNNING' AND r.worker IS NOT NULL THEN 1 ELSE 0 END " +
            "FROM (SELECT run_id FROM $runs WHERE $where AND graph_key = ANY(?) ORDER BY $order LIMIT ? " +
            "FOR UPDATE SKIP LOCKED) AS p WHERE r.run_id = p.run_id " +
            "RETURNING r.run_id, r.graph_key, r.input, r.attempt, r.answers",
    ).use {
        it.setString(1, worker)
        it.setLong(2, leaseMillis)
        var next = 3
        if (excluded != null) it.setArray(next++, c.createArrayOf("text", excluded))
        it.setArray(next++, c.createArrayOf("text", graphKeys))
        it.setInt(next, limit)
        it.executeQuery().use { rs ->
            buildList {
                while (rs.next()) {
                    add(
                        Claim(
                            rs.getString(1),
                            rs.getString(2),
                            rs.getString(3),
                            rs.getInt(4),
                            decodeAnswers(rs.getString(5)),
                        ),
                    )
                }
            }
        }
    }

    /**
     * Extends the leases of [runIds] held by [worker] and returns `runId -> attempt` of those it still holds; a run
     * missing from the answer was taken over (or ended).
     */
    fun heartbeat(worker: String, runIds: Array<String>, leaseMillis: Long, bound: Duration): Map<String, Int> =
        attempts(bound) { c, _ ->
            c.prepareStatement(
                "UPDATE $runs SET lease_until = clock_timestamp() + ? * interval '1 millisecond', " +
                    "heartbeat_at = clock_timestamp() " +
                    "WHERE run_id = ANY(?) AND worker = ? AND status = 'RUNNING' RETURNING run_id, attempt",
            ).use {
                it.setLong(1, leaseMillis)
                it.setArray(2, c.createArrayOf("text", runIds))
                it.setString(3, worker)
                it.executeQuery().use { rs -> buildMap { while (rs.next()) put(rs.getString(1), rs.getInt(2)) } }
            }
        }

    /**
     * Records how claim [attempt] of [runId] ended, if [worker] still holds it (fenced by the claim number), and
     * notifies the waiting clients; with [release], releases the run's store lease in the same transaction. Returns
     * whether it was recorded.
     *
     * Lock order: the queue row first, then the store's lease row, as [claim] takes them. The other way round, a
     * finish holding a lapsed run's store row and a claim of that run holding its queue row would wait on each other
     * (a deadlock PostgreSQL breaks by failing one of them).
     */
    fun finish(
        worker: String,
        runId: String,
        attempt: Int,
        status: FleetStatus,
        result: String?,
        error: String?,
        interrupts: List<FleetInterrupt>,
        retryInMillis: Long = 0,
        release: Pair<StoreLeases, Lease>? = null,
    ): Boolean = attempts { c, retry ->
        c.transaction {
            val updated = c.prepareStatement(
                // Answers stay while the run goes back to the queue unfinished: they apply until it checkpoints past
                // its interrupt.
                "UPDATE $runs SET status = ?, result = ?, error = ?, interrupts = ?, worker = NULL, " +
                    "answers = CASE WHEN ? IN ('RUNNING', 'QUEUED') THEN answers END, " +
                    "lease_until = CASE WHEN ? = 'RUNNING' " +
                    "THEN clock_timestamp() + ? * interval '1 millisecond' END, " +
                    "not_before = clock_timestamp(), " +
                    "finished_at = CASE WHEN ? IN ('COMPLETED', 'FAILED') THEN clock_timestamp() END " +
                    "WHERE run_id = ? AND attempt = ? AND worker = ? AND status = 'RUNNING' RETURNING graph_key",
            ).use {
                it.setString(1, status.name)
                it.setString(2, result)
                it.setString(3, error)
                it.setString(4, if (interrupts.isEmpty()) null else encodeInterrupts(interrupts))
                it.setString(5, status.name)
                it.setString(6, status.name)
                it.setLong(7, retryInMillis)
                it.setString(8, status.name)
                it.setString(9, runId)
                it.setInt(10, attempt)
                it.setString(11, worker)
                it.executeQuery().use { rs -> if (rs.next()) rs.getString(1) else null }
            }
            release?.let { (leases, lease) -> leases.release(c, lease) }
            if (updated != null) {
                if (status.settled) notify(c, tables.doneChannel, runId) else notify(c, tables.workChannel, updated)
            }
            updated != null || (retry && recorded(c, runId, attempt, status))
        }
    }

    /**
     * Whether claim [attempt] of [runId] already ended with [status]: a retried [finish] whose first try committed
     * before its answer was lost (no other worker can end this claim: a new claim starts a new attempt).
     */
    private fun recorded(c: Connection, runId: String, attempt: Int, status: FleetStatus): Boolean =
        c.prepareStatement("SELECT 1 FROM $runs WHERE run_id = ? AND attempt = ? AND status = ? AND worker IS NULL")
            .use {
                it.setString(1, runId)
                it.setInt(2, attempt)
                it.setString(3, status.name)
                it.executeQuery().use { rs -> rs.next() }
            }

    fun notify(c: Connection, channel: String, payload: String) {
        c.prepareStatement("SELECT pg_notify(?, ?)").use {
            it.setString(1, channel)
            it.setString(2, payload)
            it.executeQuery().close()
        }
    }

    companion object {
        /** How long a queue connection waits for any answer of the server before it is dropped and retried. */
        const val NETWORK_TIMEOUT_MILLIS = 30_000

        fun graphKey(graphId: String, version: Int): String = "$graphId@$version"
    }
}
