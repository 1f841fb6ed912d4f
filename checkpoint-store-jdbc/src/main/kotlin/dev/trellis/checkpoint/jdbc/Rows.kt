package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointRef
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.UnreadableCheckpointException
import dev.trellis.checkpoint.internal.RunRow
import dev.trellis.checkpoint.internal.StoreRules
import java.sql.Connection
import java.sql.PreparedStatement
import java.sql.ResultSet
import java.sql.SQLException
import java.sql.Types
import java.time.Instant

/** The columns of a run row, in the order [runRow] reads them. */
internal const val RUN_COLUMNS =
    "run_id, graph_id, owner, lease_until, epoch, latest_sequence, latest_status, created_at"

/** The columns of a checkpoint row, in the order [bindRecord] binds them. */
internal const val RECORD_COLUMNS = "run_id, sequence, parent_sequence, forked_from_run, forked_from_sequence, " +
    "graph_id, schema_version, created_at, status, kind, payload, metadata"

/** The insert of one checkpoint row into [checkpoints], bound by [bindRecord]. */
internal fun insertRecordSql(checkpoints: String): String =
    "INSERT INTO $checkpoints ($RECORD_COLUMNS) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

/** The update of a run row after its checkpoint was appended, bound by [bindLatest]. */
internal fun updateLatestSql(runs: String): String =
    "UPDATE $runs SET latest_sequence = ?, latest_status = ?, graph_id = ? WHERE run_id = ? AND epoch = ?"

/**
 * The update of a run row to a checkpoint appended with a lease, bound by [bindAdvance]: it changes the row only if
 * the lease still holds the run (epoch and owner) and the checkpoint is the next sequence, so that the usual append
 * is checked and written by this one statement.
 */
internal fun advanceLatestSql(runs: String): String =
    "UPDATE $runs SET latest_sequence = ?, latest_status = ?, graph_id = ? " +
        "WHERE run_id = ? AND epoch = ? AND owner = ? AND latest_sequence = ?"

/**
 * The usual append as one statement ([JdbcEngine.updateAlone]), bound by [bindAppendNext]: [advanceLatestSql]'s update
 * of the run row and, only if it moved the row (the lease holds the run, the record is the next sequence), the insert
 * of the checkpoint. Its update count is 1 when the checkpoint was appended and 0 when nothing changed.
 */
internal fun appendNextSql(runs: String, checkpoints: String): String =
    "WITH moved AS (${advanceLatestSql(runs)} RETURNING run_id) " +
        "INSERT INTO $checkpoints ($RECORD_COLUMNS) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM moved"

/** Binds [record], appended with [lease], to [appendNextSql]'s parameters. */
internal fun bindAppendNext(statement: PreparedStatement, record: CheckpointRecord, lease: Lease) {
    bindAdvance(statement, record, lease)
    bindRecord(statement, record, ADVANCE_PARAMETERS)
}

/** How many parameters [advanceLatestSql] has. */
private const val ADVANCE_PARAMETERS = 7

/** Binds [record], appended with [lease], to [advanceLatestSql]'s parameters. */
internal fun bindAdvance(statement: PreparedStatement, record: CheckpointRecord, lease: Lease) {
    statement.setLong(1, record.sequence)
    statement.setString(2, record.status)
    statement.setString(3, record.graphId)
    statement.setString(4, record.runId)
    statement.setLong(5, lease.epoch)
    statement.setString(6, lease.owner)
    statement.setLong(7, record.sequence - 1)
}

/** Binds [record] to [insertRecordSql]'s parameters, or to the twelve that follow the first [after]. */
internal fun bindRecord(statement: PreparedStatement, record: CheckpointRecord, after: Int = 0) {
    statement.setString(after + 1, record.runId)
    statement.setLong(after + 2, record.sequence)
    statement.setNullableLong(after + 3, record.parentSequence)
    statement.setString(after + 4, record.forkedFrom?.runId)
    statement.setNullableLong(after + 5, record.forkedFrom?.sequence)
    statement.setString(after + 6, record.graphId)
    statement.setInt(after + 7, record.schemaVersion)
    statement.setString(after + 8, record.createdAt.toString())
    statement.setString(after + 9, record.status)
    statement.setString(after + 10, record.kind.name)
    statement.setString(after + 11, record.payload)
    statement.setString(after + 12, MetadataCodec.encode(record.metadata))
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
    // 0: recorded before the stores kept it.
    createdAt = rs.getLong(8).takeIf { it > 0 }?.let(Instant::ofEpochMilli),
)

internal fun ResultSet.getNullableLong(index: Int): Long? = getLong(index).takeUnless { wasNull() }

internal fun PreparedStatement.setNullableLong(index: Int, value: Long?) {
    if (value == null) setNull(index, Types.BIGINT) else setLong(index, value)
}

/**
 * Decodes one checkpoint row; a corrupt column fails with [UnreadableCheckpointException] naming the run, the
 * sequence, the column and [database], never with the decoder's own exception.
 */
internal fun checkpointRecord(rs: ResultSet, database: String): CheckpointRecord {
    val runId = rs.getString(1)
    val sequenceText = rs.getString(2)
    var column = "sequence"
    try {
        val sequence = sequenceText.toLong()
        column = "parent_sequence"
        val parent = rs.getString(3)?.toLong()
        column = "forked_from_sequence"
        val forkedRun = rs.getString(4)
        val forkedFrom = forkedRun?.let { CheckpointRef(it, rs.getString(5).toLong()) }
        column = "schema_version"
        val schemaVersion = rs.getString(7).toInt()
        column = "created_at"
        val createdAt = Instant.parse(rs.getString(8))
        column = "kind"
        val kind = CheckpointRecord.Kind.valueOf(rs.getString(10))
        column = "metadata"
        val metadata = MetadataCodec.decode(rs.getString(12))
        column = "the row as a whole"
        return CheckpointRecord(
            runId = runId,
            sequence = sequence,
            parentSequence = parent,
            forkedFrom = forkedFrom,
            graphId = rs.getString(6),
            schemaVersion = schemaVersion,
            createdAt = createdAt,
            status = rs.getString(9),
            kind = kind,
            payload = rs.getString(11),
            metadata = metadata,
        )
    } catch (e: SQLException) {
        throw e
    } catch (e: Exception) {
        throw UnreadableCheckpointException(
            runId,
            sequenceText,
            "Checkpoint $sequenceText of run ${StoreRules.quote(runId)} in $database cannot be read: " +
                "column $column is corrupt (${e.javaClass.simpleName}: ${e.message?.take(200)}). The row was " +
                "changed outside Trellis; restore it from a backup, or delete the run, or prune past it.",
            e,
        )
    }
}

/** Whether [record] continues the latest checkpoint or starts afresh: what the update of the run row alone checks. */
internal fun continuesLatest(record: CheckpointRecord): Boolean {
    val parent = record.parentSequence
    return parent == null || parent == record.sequence - 1
}

/** The records of table [checkpoints] selected by [where] (its parameters set by [bind]), of a store [description]. */
internal fun selectRecords(
    c: Connection,
    checkpoints: String,
    description: String,
    where: String,
    bind: (PreparedStatement) -> Unit,
): List<CheckpointRecord> = c.prepareStatement("SELECT $RECORD_COLUMNS FROM $checkpoints $where").use { statement ->
    bind(statement)
    statement.executeQuery().use { rs -> buildList { while (rs.next()) add(checkpointRecord(rs, description)) } }
}

/** The records of [rs], leaving out rows that cannot be decoded (listed as missing: `get` of one names the problem). */
internal fun readableRecords(rs: ResultSet, description: String): List<CheckpointRecord> = buildList {
    while (rs.next()) {
        try {
            add(checkpointRecord(rs, description))
        } catch (_: UnreadableCheckpointException) {
            // left out
        }
    }
}
