package dev.trellis.checkpoint.internal

import java.sql.Connection

/** What differs between the SQL databases behind [JdbcCheckpointStore]: connections, table names, row locks. */
internal interface JdbcEngine : AutoCloseable {
    /** Names the database in error messages, for example `SQLite database /tmp/trellis.db`. */
    val description: String

    /** The qualified name of the runs table. */
    val runsTable: String

    /** The qualified name of the checkpoints table. */
    val checkpointsTable: String

    /** Appended to the `SELECT` of a run row inside a write transaction to lock it (`FOR UPDATE`), or empty. */
    val lockRow: String

    /**
     * Runs [block] in one transaction on the engine's dispatcher (never the caller's thread), with the schema
     * created first, and commits; rolls back if [block] throws.
     */
    suspend fun <T> transaction(block: (Connection) -> T): T
}

/** Runs [block] in a transaction on [connection], which must not be in auto-commit mode. */
internal fun <T> Connection.inTransaction(block: (Connection) -> T): T {
    try {
        val result = block(this)
        commit()
        return result
    } catch (e: Throwable) {
        try {
            rollback()
        } catch (rollbackFailure: java.sql.SQLException) {
            e.addSuppressed(rollbackFailure)
        }
        throw e
    }
}
