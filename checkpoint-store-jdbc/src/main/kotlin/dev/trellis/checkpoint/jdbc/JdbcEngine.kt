package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.InternalStoreApi
import java.sql.Connection
import java.sql.PreparedStatement

/** What differs between the SQL databases behind [JdbcCheckpointStore]: connections, table names, row locks. */
@InternalStoreApi
public interface JdbcEngine : AutoCloseable {
    /** Names the database in error messages, for example `SQLite database /tmp/trellis.db`. */
    public val description: String

    /**
     * Names the store in [dev.trellis.checkpoint.CheckpointStoreUnavailableException.store]: the database file, or
     * the JDBC URL without credentials.
     */
    public val location: String get() = description

    /** Whether [e], thrown by a transaction, is a fault that passes and is retried ([TransientFaults]). */
    public fun isTransient(e: Throwable): Boolean = TransientFaults.isTransient(e)

    /** What an operator should do when the store stayed unavailable after [e], for the end of the error message. */
    public fun unavailableAdvice(e: Throwable): String =
        "Check that the database is up and reachable (network, failover, connection limits)."

    /** The qualified name of the runs table. */
    public val runsTable: String

    /** The qualified name of the checkpoints table. */
    public val checkpointsTable: String

    /** The qualified name of the node cache table (`docs/semantics.md` §13.5). */
    public val nodeCacheTable: String

    /** Appended to the `SELECT` of a run row inside a write transaction to lock it (`FOR UPDATE`), or empty. */
    public val lockRow: String

    /**
     * A query returning the database's current time in epoch milliseconds (one row, one `BIGINT`), for lease expiry
     * by the database's clock; `null` when the database has no clock shared by its clients (SQLite).
     */
    public val nowMillisQuery: String? get() = null

    /**
     * Whether the database takes an array parameter (`run_id = ANY(?)`, `unnest(?::text[])`), so that a group commit
     * locks and checks the rows of a whole batch with one statement each instead of one per run.
     */
    public val arrayParameters: Boolean get() = false

    /**
     * Runs [block] in one transaction on the engine's dispatcher (never the caller's thread), with the schema
     * created first, and commits; rolls back if [block] throws.
     */
    public suspend fun <T> transaction(block: (Connection) -> T): T

    /**
     * Runs [block] as [transaction] does, for a short transaction that waits for nothing but the database (a claim,
     * an append, a release, the read of the latest checkpoint): an engine may run it on the caller's thread when it
     * can begin at once, which saves the hop to its dispatcher and back, and otherwise runs it as [transaction].
     */
    public suspend fun <T> shortTransaction(block: (Connection) -> T): T = transaction(block)

    /**
     * Runs the one statement [sql], bound by [bind], in a transaction of its own (auto-commit: one round trip, with the
     * engine's bounds on waiting sent in the same one) on the engine's dispatcher, with the schema created first, and
     * returns its update count; or returns `null`, running nothing, when the engine has no such path or cannot run
     * [sql] (a data-modifying `WITH`): the store then writes in a [shortTransaction].
     */
    public suspend fun updateAlone(sql: String, bind: (PreparedStatement) -> Unit): Int? = null

    /**
     * Runs [use] with [sql] prepared on [c], inside a transaction; an engine that keeps one connection may keep the
     * statement for its next run instead of preparing it again. [use] must close the result sets it opens.
     */
    public fun <R> withStatement(c: Connection, sql: String, use: (PreparedStatement) -> R): R =
        c.prepareStatement(sql).use(use)
}

/** Runs [block] in a transaction on [connection], which must not be in auto-commit mode. */
@InternalStoreApi
public fun <T> Connection.inTransaction(block: (Connection) -> T): T {
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
