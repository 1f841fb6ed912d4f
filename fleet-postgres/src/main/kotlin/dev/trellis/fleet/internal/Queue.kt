package dev.trellis.fleet.internal

import dev.trellis.checkpoint.Lease
import dev.trellis.fleet.FleetInterrupt
import dev.trellis.fleet.FleetResult
import dev.trellis.fleet.FleetRunInfo
import dev.trellis.fleet.FleetStatus
import dev.trellis.fleet.GraphCounts
import dev.trellis.fleet.Submission
import dev.trellis.fleet.internal.Tables.Companion.transaction
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import java.sql.Connection
import java.sql.SQLException
import java.sql.Timestamp
import javax.sql.DataSource

/** The queue's SQL: every statement on `trellis_fleet_runs` and `trellis_fleet_graphs`. Blocking JDBC. */
internal class Queue(val dataSource: DataSource, val tables: Tables) {
    private val runs = tables.runs

    private fun <T> connect(block: (Connection) -> T): T {
        tables.ensure(dataSource)
        return dataSource.connection.use(block)
    }

    fun registerGraph(graphId: String, version: Int, stateSchema: String, shapes: String) = connect { c ->
        c.prepareStatement(
            "INSERT INTO ${tables.graphs} (graph_id, graph_version, state_schema, keys) VALUES (?, ?, ?, ?) " +
                "ON CONFLICT (graph_id, graph_version) DO UPDATE SET state_schema = excluded.state_schema, " +
                "keys = excluded.keys, registered_at = now()",
        ).use {
            it.setString(1, graphId)
            it.setInt(2, version)
            it.setString(3, stateSchema)
            it.setString(4, shapes)
            it.executeUpdate()
        }
    }

    /** Inserts [submission] after checking it, in one transaction: either the run is queued, or nothing is written. */
    fun submit(submission: Submission) = connect { c ->
        val input = StateJson.parseObject(submission.input, "The input of run '${submission.runId}'")
        c.transaction {
            val shapes = c.prepareStatement(
                "SELECT keys FROM ${tables.graphs} WHERE graph_id = ? AND graph_version = ?",
            ).use {
                it.setString(1, submission.graphId)
                it.setInt(2, submission.graphVersion)
                it.executeQuery().use { rs -> if (rs.next()) rs.getString(1) else null }
            }
            if (shapes == null) {
                val known = c.prepareStatement(
                    "SELECT graph_version FROM ${tables.graphs} WHERE graph_id = ? ORDER BY graph_version",
                ).use {
                    it.setString(1, submission.graphId)
                    it.executeQuery().use { rs -> buildList { while (rs.next()) add(rs.getInt(1)) } }
                }
                throw IllegalArgumentException(
                    if (known.isEmpty()) {
                        "No worker has registered graph '${submission.graphId}' (in schema ${tables.schema}); " +
                            "start a " +
                            "worker that registers it (FleetWorker.register), or check the graph id."
                    } else {
                        "No worker has registered version ${submission.graphVersion} of graph " +
                            "'${submission.graphId}'; registered versions: $known. Submit to one of them, or start a " +
                            "worker that registers version ${submission.graphVersion}."
                    },
                )
            }
            StateJson.problem(input, shapes, submission.graphId, submission.graphVersion)?.let {
                throw IllegalArgumentException(it)
            }
            val inserted = c.prepareStatement(
                "INSERT INTO $runs (run_id, graph_id, graph_version, graph_key, input, priority, not_before, status) " +
                    "VALUES (?, ?, ?, ?, ?, ?, coalesce(?, clock_timestamp()), 'QUEUED') ON CONFLICT (run_id) DO NOTHING",
            ).use {
                it.setString(1, submission.runId)
                it.setString(2, submission.graphId)
                it.setInt(3, submission.graphVersion)
                it.setString(4, graphKey(submission.graphId, submission.graphVersion))
                it.setString(5, input.toString())
                it.setInt(6, submission.priority)
                it.setTimestamp(7, submission.notBefore?.let(Timestamp::from))
                it.executeUpdate()
            }
            if (inserted == 0) {
                val status = status(c, submission.runId)
                throw IllegalArgumentException(
                    "Run id '${submission.runId}' is already in the queue ($status); nothing was submitted. Use " +
                        "another id, or follow the existing run with FleetClient.run(\"${submission.runId}\").",
                )
            }
            notify(c, tables.workChannel, graphKey(submission.graphId, submission.graphVersion))
        }
    }

    fun status(c: Connection, runId: String): FleetStatus? =
        c.prepareStatement("SELECT status FROM $runs WHERE run_id = ?").use {
            it.setString(1, runId)
            it.executeQuery().use { rs -> if (rs.next()) FleetStatus.valueOf(rs.getString(1)) else null }
        }

    fun result(runId: String): FleetResult? = connect { c ->
        c.prepareStatement("SELECT status, attempt, result, error, interrupts FROM $runs WHERE run_id = ?").use {
            it.setString(1, runId)
            it.executeQuery().use { rs ->
                if (!rs.next()) return@connect null
                FleetResult(
                    runId,
                    FleetStatus.valueOf(rs.getString(1)),
                    rs.getInt(2),
                    rs.getString(3),
                    rs.getString(4),
                    decodeInterrupts(rs.getString(5)),
                )
            }
        }
    }

    /** Records answers of a PAUSED run and queues it again; fails naming the problem. */
    fun answer(runId: String, answers: Map<String, String>?, single: String?) = connect { c ->
        c.transaction {
            val (status, interrupts, key) = c.prepareStatement(
                "SELECT status, interrupts, graph_key FROM $runs WHERE run_id = ? FOR UPDATE",
            ).use {
                it.setString(1, runId)
                it.executeQuery().use { rs ->
                    if (!rs.next()) {
                        throw NoSuchElementException(
                            "No run '$runId' in the queue (schema ${tables.schema}).",
                        )
                    }
                    Triple(FleetStatus.valueOf(rs.getString(1)), decodeInterrupts(rs.getString(2)), rs.getString(3))
                }
            }
            check(status == FleetStatus.PAUSED) {
                "Run '$runId' is $status, not PAUSED; only a paused run takes answers."
            }
            val pending = interrupts.map { it.nodeId }
            val given = if (single != null) {
                require(pending.size == 1) {
                    "Run '$runId' has ${pending.size} pending interrupts ($pending); answer each by node id."
                }
                mapOf(pending.single() to single)
            } else {
                answers!!
            }
            for (node in given.keys) {
                require(node in pending) {
                    "Node '$node' of run '$runId' has no pending interrupt to answer; pending: $pending."
                }
            }
            c.prepareStatement(
                "UPDATE $runs SET status = 'QUEUED', answers = ?, not_before = clock_timestamp() WHERE run_id = ?",
            ).use {
                it.setString(1, JsonObject(given.mapValues { (_, v) -> JsonPrimitive(v) }).toString())
                it.setString(2, runId)
                it.executeUpdate()
            }
            notify(c, tables.workChannel, key)
        }
    }

    fun list(status: FleetStatus, limit: Int): List<FleetRunInfo> = connect { c ->
        c.prepareStatement(
            "SELECT run_id, graph_id, graph_version, status, attempt, worker FROM $runs WHERE status = ? ORDER BY seq LIMIT ?",
        ).use {
            it.setString(1, status.name)
            it.setInt(2, limit)
            it.executeQuery().use { rs ->
                buildList {
                    while (rs.next()) {
                        add(
                            FleetRunInfo(
                                rs.getString(1),
                                rs.getString(2),
                                rs.getInt(3),
                                FleetStatus.valueOf(rs.getString(4)),
                                rs.getInt(5),
                                rs.getString(6),
                            ),
                        )
                    }
                }
            }
        }
    }

    fun counts(): List<GraphCounts> = connect { c ->
        c.prepareStatement(
            "SELECT graph_id, graph_version, " +
                "count(*) FILTER (WHERE status = 'QUEUED'), count(*) FILTER (WHERE status = 'RUNNING'), " +
                "count(*) FILTER (WHERE status = 'PAUSED'), count(*) FILTER (WHERE status = 'COMPLETED'), " +
                "count(*) FILTER (WHERE status = 'FAILED') FROM $runs GROUP BY graph_id, graph_version " +
                "ORDER BY graph_id, graph_version",
        ).use {
            it.executeQuery().use { rs ->
                buildList {
                    while (rs.next()) {
                        add(
                            GraphCounts(
                                rs.getString(1),
                                rs.getInt(2),
                                rs.getLong(3),
                                rs.getLong(4),
                                rs.getLong(5),
                                rs.getLong(6),
                                rs.getLong(7),
                            ),
                        )
                    }
                }
            }
        }
    }

    /** Deletes up to [limit] runs finished before [olderThanMillis] ago and returns their ids. */
    fun purge(olderThanMillis: Long, limit: Int): List<String> = connect { c ->
        c.prepareStatement(
            "DELETE FROM $runs WHERE run_id IN (SELECT run_id FROM $runs WHERE status IN ('COMPLETED', 'FAILED') " +
                "AND finished_at < clock_timestamp() - ? * interval '1 millisecond' ORDER BY finished_at LIMIT ? " +
                "FOR UPDATE SKIP LOCKED) RETURNING run_id",
        ).use {
            it.setLong(1, olderThanMillis)
            it.setInt(2, limit)
            it.executeQuery().use { rs -> buildList { while (rs.next()) add(rs.getString(1)) } }
        }
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
        "UPDATE $runs AS r SET status = 'RUNNING', worker = ?, attempt = r.attempt + 1, " +
            "lease_until = clock_timestamp() + ? * interval '1 millisecond', " +
            "started_at = coalesce(r.started_at, clock_timestamp()) " +
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
    fun heartbeat(worker: String, runIds: Array<String>, leaseMillis: Long): Map<String, Int> = connect { c ->
        c.prepareStatement(
            "UPDATE $runs SET lease_until = clock_timestamp() + ? * interval '1 millisecond' " +
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
    ): Boolean = connect { c ->
        runAgainIfRolledBack {
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
                updated != null
            }
        }
    }

    private fun notify(c: Connection, channel: String, payload: String) {
        c.prepareStatement("SELECT pg_notify(?, ?)").use {
            it.setString(1, channel)
            it.setString(2, payload)
            it.executeQuery().close()
        }
    }

    /**
     * Runs [transaction] again when the database rolled it back for a reason that passes (SQLSTATE class 40: a
     * deadlock it broke, a serialization failure), [ROLLED_BACK_TRIES] times in all.
     */
    private inline fun <T> runAgainIfRolledBack(transaction: () -> T): T {
        var tries = 1
        while (true) {
            try {
                return transaction()
            } catch (e: SQLException) {
                if (tries++ >= ROLLED_BACK_TRIES || e.sqlState?.startsWith("40") != true) throw e
            }
        }
    }

    companion object {
        private const val ROLLED_BACK_TRIES = 3

        fun graphKey(graphId: String, version: Int): String = "$graphId@$version"
    }
}
