package dev.trellis.checkpoint.postgres.internal

import dev.trellis.checkpoint.jdbc.JdbcEngine
import dev.trellis.checkpoint.jdbc.Migrations
import dev.trellis.checkpoint.jdbc.inTransaction
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import java.sql.Connection
import javax.sql.DataSource

/**
 * Borrows a connection from [dataSource] per transaction. Before the first one, creates or migrates [schema] under a
 * transaction-scoped advisory lock, so that stores starting at the same time on an empty database do not collide.
 * Run rows are locked with `SELECT … FOR UPDATE`.
 */
internal class PostgresEngine(
    private val dataSource: DataSource,
    private val schema: String,
    private val dispatcher: CoroutineDispatcher,
) : JdbcEngine {
    override val description: String = "PostgreSQL schema $schema"
    override val runsTable: String = "$schema.trellis_runs"
    override val checkpointsTable: String = "$schema.trellis_checkpoints"
    override val lockRow: String = " FOR UPDATE"

    private val migrated = Mutex()

    @Volatile
    private var ready = false

    init {
        require(SCHEMA_NAME.matches(schema)) {
            "'$schema' is not a usable schema name; use lower-case letters, digits and underscores, starting with a " +
                "letter or underscore, at most 63 characters (for example \"trellis\")."
        }
    }

    override suspend fun <T> transaction(block: (Connection) -> T): T {
        if (!ready) {
            migrated.withLock {
                if (!ready) {
                    run { c ->
                        c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))").use {
                            it.setString(1, "trellis-checkpoint-store:$schema")
                            it.executeQuery().close()
                        }
                        c.createStatement().use { it.execute("CREATE SCHEMA IF NOT EXISTS $schema") }
                        Migrations.migrate(
                            c,
                            "$schema.trellis_schema_version",
                            runsTable,
                            checkpointsTable,
                            description,
                        )
                    }
                    ready = true
                }
            }
        }
        return run(block)
    }

    private suspend fun <T> run(block: (Connection) -> T): T = withContext(dispatcher) {
        dataSource.connection.use { c ->
            c.autoCommit = false
            c.inTransaction(block)
        }
    }

    override fun close() {
        // The data source belongs to the caller.
    }

    private companion object {
        val SCHEMA_NAME = Regex("[a-z_][a-z0-9_]{0,62}")
    }
}
