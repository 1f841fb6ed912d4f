package dev.trellis.fleet.internal

import dev.trellis.fleet.FleetRunInfo
import dev.trellis.fleet.FleetStatus
import java.sql.Connection
import java.sql.ResultSet

/*
 * The queue's rows as readers see them (Trellis Studio, dashboards): by run id, and the claims lost now. These reads
 * never create or migrate the fleet's tables — a schema without them has no runs — and read a queue of version 1
 * (before claim times and lost claims were recorded) with those columns empty.
 */

/** The version of the fleet's tables in the schema, 0 when there are none. */
internal fun Queue.tablesVersion(c: Connection): Int {
    val present = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL AND to_regclass(?) IS NOT NULL").use {
        it.setString(1, tables.runs)
        it.setString(2, tables.versions)
        it.executeQuery().use { rs -> rs.next() && rs.getBoolean(1) }
    }
    if (!present) return 0
    return c.createStatement().use { s ->
        s.executeQuery("SELECT coalesce(max(version), 0) FROM ${tables.versions}").use { rs ->
            rs.next()
            rs.getInt(1)
        }
    }
}

/** The rows of [runIds] the queue has, in one query. */
internal fun Queue.read(runIds: Collection<String>): List<FleetRunInfo> = if (runIds.isEmpty()) {
    emptyList()
} else {
    readRows("run_id = ANY(?)", "run_id") { c, statement ->
        statement.setArray(1, c.createArrayOf("text", runIds.toTypedArray()))
    }
}

/** Up to [limit] runs whose claim is lost now (RUNNING under a lapsed lease), the longest lapsed first. */
internal fun Queue.lapsed(limit: Int): List<FleetRunInfo> = readRows(
    "status = 'RUNNING' AND worker IS NOT NULL AND lease_until < clock_timestamp()",
    "lease_until LIMIT ?",
) { _, statement -> statement.setInt(1, limit) }

private fun Queue.readRows(
    where: String,
    order: String,
    bind: (Connection, java.sql.PreparedStatement) -> Unit,
): List<FleetRunInfo> = connectReading { c ->
    val version = tablesVersion(c)
    if (version == 0) return@connectReading emptyList()
    c.prepareStatement("SELECT ${infoColumns(version)} FROM $runs WHERE $where ORDER BY $order").use {
        bind(c, it)
        it.executeQuery().use { rs -> buildList { while (rs.next()) add(info(rs)) } }
    }
}

/** The columns [info] reads, of a queue at [version] (2 and later record claims; 1 did not). */
internal fun infoColumns(version: Int = Tables.VERSION): String {
    val claims = if (version >= 2) "claimed_at, heartbeat_at, lost_claims" else "NULL, NULL, 0"
    return "run_id, graph_id, graph_version, status, attempt, worker, priority, submitted_at, started_at, $claims, " +
        "lease_until, finished_at, error, " +
        "(status = 'RUNNING' AND worker IS NOT NULL AND lease_until < clock_timestamp())"
}

/** One row as [infoColumns] selects it. */
internal fun info(rs: ResultSet): FleetRunInfo = FleetRunInfo(
    runId = rs.getString(1),
    graphId = rs.getString(2),
    graphVersion = rs.getInt(3),
    status = FleetStatus.valueOf(rs.getString(4)),
    attempt = rs.getInt(5),
    worker = rs.getString(6),
    priority = rs.getInt(7),
    submittedAt = rs.getTimestamp(8)?.toInstant(),
    startedAt = rs.getTimestamp(9)?.toInstant(),
    claimedAt = rs.getTimestamp(10)?.toInstant(),
    heartbeatAt = rs.getTimestamp(11)?.toInstant(),
    lostClaims = rs.getInt(12),
    leaseUntil = rs.getTimestamp(13)?.toInstant(),
    finishedAt = rs.getTimestamp(14)?.toInstant(),
    error = rs.getString(15),
    claimLapsed = rs.getBoolean(16),
)
