package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.RunInfo
import dev.trellis.checkpoint.RunQuery
import dev.trellis.checkpoint.internal.PruneEntry
import dev.trellis.checkpoint.internal.StoreRules
import java.sql.Connection

// The store's reads of its runs table for listings, and of a run's checkpoint chain for pruning: plain SELECTs on
// primary keys, kept apart from the store's transactions that check and write (JdbcCheckpointStore).

/**
 * Every run of the [runs] table, by run id; or, with a [query], one page of them in its order, paged by key: on the
 * run id, or newest first on `(created_at, run_id)` (the row values of the cursor's run, read first).
 */
internal fun Connection.selectRuns(runs: String, query: RunQuery? = null): List<RunInfo> {
    val newestFirst = query?.order == RunQuery.Order.NEWEST_FIRST
    val where = ArrayList<String>()
    val args = ArrayList<Any>()
    query?.after?.let { after ->
        if (newestFirst) {
            val cursor = selectRun(runs, after) ?: throw IllegalArgumentException(StoreRules.unknownCursor(after))
            where += "(created_at, run_id) < (?, ?)"
            args += cursor.createdAt?.toEpochMilli() ?: 0L
            args += after
        } else {
            where += "run_id > ?"
            args += after
        }
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
    val order = if (newestFirst) "created_at DESC, run_id DESC" else "run_id"
    val limit = if (query == null) "" else " LIMIT ${query.limit}"
    return prepareStatement("SELECT $RUN_COLUMNS FROM $runs$filter ORDER BY $order$limit").use { statement ->
        args.forEachIndexed { i, arg ->
            if (arg is Long) statement.setLong(i + 1, arg) else statement.setString(i + 1, arg as String)
        }
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
