package dev.trellis.fleet.internal

import dev.trellis.checkpoint.jdbc.inTransaction
import java.sql.Connection
import javax.sql.DataSource

/**
 * The fleet's tables in one schema, next to the checkpoint store's: `trellis_fleet_runs` (the queue: one row per run,
 * never deleted until retention), `trellis_fleet_graphs` (what the workers can run) and
 * `trellis_fleet_schema_version`. Created (or brought to the current [VERSION]) on first use under an advisory lock,
 * like the store's tables; readers that must not create them check [exists] first.
 */
internal class Tables(val schema: String) {
    init {
        require(SCHEMA_NAME.matches(schema)) {
            "'$schema' is not a usable schema name; use lower-case letters, digits and underscores, starting with a " +
                "letter or underscore, at most 63 characters (for example \"trellis\")."
        }
    }

    val runs = "$schema.trellis_fleet_runs"
    val graphs = "$schema.trellis_fleet_graphs"
    val versions = "$schema.trellis_fleet_schema_version"

    /** The NOTIFY channel of new work (payload: the graph key `id@version`). */
    val workChannel = "trellis_fleet_work_$schema".take(MAX_CHANNEL)

    /** The NOTIFY channel of runs that settled (payload: the run id). */
    val doneChannel = "trellis_fleet_done_$schema".take(MAX_CHANNEL)

    @Volatile
    private var ready = false

    /** Creates the tables once per process (idempotent across processes). */
    fun ensure(dataSource: DataSource) {
        if (ready) return
        synchronized(this) {
            if (ready) return
            dataSource.connection.use { c ->
                c.autoCommit = false
                try {
                    c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))").use {
                        it.setString(1, "trellis-fleet:$schema")
                        it.executeQuery().close()
                    }
                    c.createStatement().use { s ->
                        s.execute("CREATE SCHEMA IF NOT EXISTS $schema")
                        s.execute(
                            "CREATE TABLE IF NOT EXISTS $versions (version INTEGER NOT NULL PRIMARY KEY, " +
                                "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
                        )
                    }
                    val current = c.createStatement().use { s ->
                        s.executeQuery("SELECT coalesce(max(version), 0) FROM $versions").use { rs ->
                            rs.next()
                            rs.getInt(1)
                        }
                    }
                    check(current <= VERSION) {
                        "The fleet tables in schema $schema are at version $current, newer than this Trellis " +
                            "understands ($VERSION); upgrade Trellis."
                    }
                    for (version in current + 1..VERSION) {
                        c.createStatement().use { s -> migrations[version - 1]().forEach(s::execute) }
                        c.createStatement().use { it.execute("INSERT INTO $versions (version) VALUES ($version)") }
                    }
                    c.commit()
                } catch (e: Throwable) {
                    c.rollback()
                    throw e
                }
            }
            ready = true
        }
    }

    /** Each version's statements, from the one before it; append new versions, never edit old ones. */
    private val migrations: List<() -> List<String>> = listOf(::ddl, ::claims)

    /** Version 2: when each claim was made and last heartbeat, and how many claims of the run were lost. */
    private fun claims(): List<String> = listOf(
        "ALTER TABLE $runs ADD COLUMN claimed_at TIMESTAMPTZ, ADD COLUMN heartbeat_at TIMESTAMPTZ, " +
            "ADD COLUMN lost_claims INTEGER NOT NULL DEFAULT 0",
    )

    private fun ddl(): List<String> = listOf(
        """
        CREATE TABLE $graphs (
            graph_id TEXT NOT NULL,
            graph_version INTEGER NOT NULL,
            state_schema TEXT NOT NULL,
            keys TEXT NOT NULL,
            registered_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (graph_id, graph_version)
        )
        """.trimIndent(),
        """
        CREATE TABLE $runs (
            run_id TEXT NOT NULL PRIMARY KEY,
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            graph_id TEXT NOT NULL,
            graph_version INTEGER NOT NULL,
            graph_key TEXT NOT NULL,
            input TEXT NOT NULL,
            priority INTEGER NOT NULL,
            not_before TIMESTAMPTZ NOT NULL,
            status TEXT NOT NULL,
            attempt INTEGER NOT NULL DEFAULT 0,
            worker TEXT,
            lease_until TIMESTAMPTZ,
            answers TEXT,
            interrupts TEXT,
            result TEXT,
            error TEXT,
            submitted_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
            started_at TIMESTAMPTZ,
            finished_at TIMESTAMPTZ
        )
        """.trimIndent(),
        // The claim's scan: only runnable rows are indexed, so finished runs cost the claim nothing.
        "CREATE INDEX trellis_fleet_runs_queued ON $runs (priority DESC, not_before, seq) WHERE status = 'QUEUED'",
        "CREATE INDEX trellis_fleet_runs_leased ON $runs (lease_until) WHERE status = 'RUNNING'",
        "CREATE INDEX trellis_fleet_runs_finished ON $runs (finished_at) WHERE status IN ('COMPLETED', 'FAILED')",
        "CREATE INDEX trellis_fleet_runs_paused ON $runs (seq) WHERE status = 'PAUSED'",
    )

    companion object {
        const val VERSION = 2
        private const val MAX_CHANNEL = 63
        private val SCHEMA_NAME = Regex("[a-z_][a-z0-9_]{0,62}")

        /** Runs [block] in a transaction on this connection (the stores' own commit-or-roll-back). */
        fun <T> Connection.transaction(block: (Connection) -> T): T {
            autoCommit = false
            return inTransaction(block)
        }
    }
}
