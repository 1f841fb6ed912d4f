package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.RunInfo
import dev.trellis.checkpoint.RunQuery
import dev.trellis.checkpoint.internal.PruneEntry
import java.sql.Connection

// The store's reads of its runs table for listings, and of a run's checkpoint chain for pruning: plain SELECTs on
// primary keys, kept apart from the store's transactions that check and write (JdbcCheckpointStore).

/** Every run of the [runs] table, by run id; or, with a [query], one page of them (keyset paging on the run id). */
internal fun Connection.selectRuns(runs: String, query: RunQuery? = null): List<RunInfo> {
    val where = ArrayList<String>()
    val args = ArrayList<String>()
    query?.after?.let {
        where += "run_id > ?"
        args += it
    }
    query?.status?.let {
        where += "latest_status = ?"
        args += it
    }
    query?.graphId?.let {
        where += "graph_id = ?"
        args += it
    }
    val filter = if (where.isEmpty()) "" else " WHERE " + where.joinToString(" AND ")
    val limit = if (query == null) "" else " LIMIT ${query.limit}"
    return prepareStatement("SELECT $RUN_COLUMNS FROM $runs$filter ORDER BY run_id$limit").use { statement ->
        args.forEachIndexed { i, arg -> statement.setString(i + 1, arg) }
        statement.executeQuery().use { rs -> buildList { while (rs.next()) add(runRow(rs).toInfo()) } }
    }
}

/** Run [runId] of the [runs] table, or null when there is none. */
internal fun Connection.selectRun(runs: String, runId: String): RunInfo? =
    prepareStatement("SELECT $RUN_COLUMNS FROM $runs WHERE run_id = ?").use { statement ->
        statement.setString(1, runId)
        statement.executeQuery().use { rs -> if (rs.next()) runRow(rs).toInfo() else null }
    }

/** The chain of run [runId]'s checkpoints in the [checkpoints] table, as pruning weighs them. */
internal fun Connection.pruneEntries(checkpoints: String, runId: String): List<PruneEntry> =
    prepareStatement("SELECT sequence, parent_sequence, kind FROM $checkpoints WHERE run_id = ?").use { statement ->
        statement.setString(1, runId)
        statement.executeQuery().use { rs ->
            buildList {
                while (rs.next()) {
                    add(
                        PruneEntry(
                            rs.getLong(1),
                            rs.getNullableLong(2),
                            // A corrupt kind counts as DELTA: pruning then keeps what it may depend on.
                            CheckpointRecord.Kind.entries.firstOrNull { it.name == rs.getString(3) }
                                ?: CheckpointRecord.Kind.DELTA,
                        ),
                    )
                }
            }
        }
    }
