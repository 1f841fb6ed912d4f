package dev.trellis.fleet.internal

import dev.trellis.fleet.FleetResult
import dev.trellis.fleet.FleetRunInfo
import dev.trellis.fleet.FleetStatus
import dev.trellis.fleet.GraphCounts
import dev.trellis.fleet.Submission
import dev.trellis.fleet.internal.Tables.Companion.transaction
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import java.sql.Timestamp

/*
 * The queue's statements for clients and for registering graphs ([Queue] has the workers' claims, heartbeats and
 * ends): submitting, answering, reading results, listing, counting and purging runs. Blocking JDBC, each retried on
 * faults that pass as [Queue.connect] does.
 */

internal fun Queue.registerGraph(graphId: String, version: Int, stateSchema: String, shapes: String) = connect { c ->
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

/**
 * Inserts [submission] after checking it, in one transaction: either the run is queued, or nothing is written. A
 * retry that finds the very submission queued (its first try committed, the answer was lost) counts as done.
 */
internal fun Queue.submit(submission: Submission) = attempts { c, retry ->
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
            it.setString(4, Queue.graphKey(submission.graphId, submission.graphVersion))
            it.setString(5, input.toString())
            it.setInt(6, submission.priority)
            it.setTimestamp(7, submission.notBefore?.let(Timestamp::from))
            it.executeUpdate()
        }
        if (inserted == 0 && !(retry && queuedAlready(c, submission, input.toString()))) {
            val status = status(c, submission.runId)
            throw IllegalArgumentException(
                "Run id '${submission.runId}' is already in the queue ($status); nothing was submitted. Use " +
                    "another id, or follow the existing run with FleetClient.run(\"${submission.runId}\").",
            )
        }
        notify(c, tables.workChannel, Queue.graphKey(submission.graphId, submission.graphVersion))
    }
}

internal fun Queue.result(runId: String): FleetResult? = connect { c ->
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
internal fun Queue.answer(runId: String, answers: Map<String, String>?, single: String?) = connect { c ->
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

internal fun Queue.list(status: FleetStatus, limit: Int): List<FleetRunInfo> = connect { c ->
    c.prepareStatement("SELECT ${infoColumns()} FROM $runs WHERE status = ? ORDER BY seq LIMIT ?").use {
        it.setString(1, status.name)
        it.setInt(2, limit)
        it.executeQuery().use { rs -> buildList { while (rs.next()) add(info(rs)) } }
    }
}

internal fun Queue.counts(): List<GraphCounts> = connect { c ->
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
internal fun Queue.purge(olderThanMillis: Long, limit: Int): List<String> = connect { c ->
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

/** Whether [submission] is in the queue as given, with [input] (a retried submit whose first try committed). */
private fun Queue.queuedAlready(c: java.sql.Connection, submission: Submission, input: String): Boolean =
    c.prepareStatement("SELECT 1 FROM $runs WHERE run_id = ? AND graph_key = ? AND input = ? AND priority = ?").use {
        it.setString(1, submission.runId)
        it.setString(2, Queue.graphKey(submission.graphId, submission.graphVersion))
        it.setString(3, input)
        it.setInt(4, submission.priority)
        it.executeQuery().use { rs -> rs.next() }
    }
