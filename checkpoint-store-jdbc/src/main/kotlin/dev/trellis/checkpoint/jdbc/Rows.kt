package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.internal.RunRow
import java.sql.PreparedStatement
import java.sql.ResultSet
import java.sql.Types
import java.time.Instant

/** The columns of a run row, in the order [runRow] reads them. */
internal const val RUN_COLUMNS = "run_id, graph_id, owner, lease_until, epoch, latest_sequence, latest_status"

/** The columns of a checkpoint row, in the order [bindRecord] binds them. */
internal const val RECORD_COLUMNS = "run_id, sequence, parent_sequence, forked_from_run, forked_from_sequence, " +
    "graph_id, schema_version, created_at, status, kind, payload, metadata"

/** The insert of one checkpoint row into [checkpoints], bound by [bindRecord]. */
internal fun insertRecordSql(checkpoints: String): String =
    "INSERT INTO $checkpoints ($RECORD_COLUMNS) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

/** The update of a run row after its checkpoint was appended, bound by [bindLatest]. */
internal fun updateLatestSql(runs: String): String =
    "UPDATE $runs SET latest_sequence = ?, latest_status = ?, graph_id = ? WHERE run_id = ? AND epoch = ?"

/** Binds [record] to [insertRecordSql]'s parameters. */
internal fun bindRecord(statement: PreparedStatement, record: CheckpointRecord) {
    statement.setString(1, record.runId)
    statement.setLong(2, record.sequence)
    statement.setNullableLong(3, record.parentSequence)
    statement.setString(4, record.forkedFrom?.runId)
    statement.setNullableLong(5, record.forkedFrom?.sequence)
    statement.setString(6, record.graphId)
    statement.setInt(7, record.schemaVersion)
    statement.setString(8, record.createdAt.toString())
    statement.setString(9, record.status)
    statement.setString(10, record.kind.name)
    statement.setString(11, record.payload)
    statement.setString(12, MetadataCodec.encode(record.metadata))
}

/** Binds [record], written under [epoch], to [updateLatestSql]'s parameters. */
internal fun bindLatest(statement: PreparedStatement, record: CheckpointRecord, epoch: Long) {
    statement.setLong(1, record.sequence)
    statement.setString(2, record.status)
    statement.setString(3, record.graphId)
    statement.setString(4, record.runId)
    statement.setLong(5, epoch)
}

/** Reads a run row selected as [RUN_COLUMNS]. */
internal fun runRow(rs: ResultSet): RunRow = RunRow(
    runId = rs.getString(1),
    graphId = rs.getString(2),
    owner = rs.getString(3),
    leaseUntil = rs.getNullableLong(4)?.let(Instant::ofEpochMilli),
    epoch = rs.getLong(5),
    latestSequence = rs.getLong(6),
    latestStatus = rs.getString(7),
)

internal fun ResultSet.getNullableLong(index: Int): Long? = getLong(index).takeUnless { wasNull() }

internal fun PreparedStatement.setNullableLong(index: Int, value: Long?) {
    if (value == null) setNull(index, Types.BIGINT) else setLong(index, value)
}
