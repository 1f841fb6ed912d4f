package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.InternalStoreApi
import java.sql.Connection
import java.time.Instant

/**
 * The versions of the store's tables. Each entry brings the tables from the previous version to its own; applied
 * versions are recorded in `trellis_schema_version`. Append new versions, never edit old ones.
 */
@InternalStoreApi
public object Migrations {
    private val versions: List<(Tables) -> List<String>> = listOf(
        { (runs, checkpoints, _) ->
            listOf(
                """
                CREATE TABLE $runs (
                    run_id TEXT NOT NULL PRIMARY KEY,
                    graph_id TEXT,
                    owner TEXT,
                    lease_until BIGINT,
                    epoch BIGINT NOT NULL,
                    latest_sequence BIGINT NOT NULL,
                    latest_status TEXT
                )
                """.trimIndent(),
                """
                CREATE TABLE $checkpoints (
                    run_id TEXT NOT NULL REFERENCES $runs (run_id),
                    sequence BIGINT NOT NULL,
                    parent_sequence BIGINT,
                    forked_from_run TEXT,
                    forked_from_sequence BIGINT,
                    graph_id TEXT NOT NULL,
                    schema_version INTEGER NOT NULL,
                    created_at TEXT NOT NULL,
                    status TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    metadata TEXT NOT NULL,
                    PRIMARY KEY (run_id, sequence)
                )
                """.trimIndent(),
            )
        },
        // 2: the node result cache (docs/semantics.md §13.5), one row per entry.
        { (_, _, nodeCache) ->
            listOf(
                """
                CREATE TABLE $nodeCache (
                    graph_id TEXT NOT NULL,
                    graph_version INTEGER NOT NULL,
                    node_id TEXT NOT NULL,
                    key_hash TEXT NOT NULL,
                    value TEXT NOT NULL,
                    stored_at BIGINT NOT NULL,
                    expires_at BIGINT,
                    PRIMARY KEY (graph_id, graph_version, node_id, key_hash)
                )
                """.trimIndent(),
                "CREATE INDEX ${nodeCache.substringAfterLast('.')}_expiry ON $nodeCache (expires_at)",
            )
        },
        // 3: when each run was first recorded (epoch milliseconds; 0 for runs recorded before), for listings newest
        // first (RunQuery.Order.NEWEST_FIRST) paged by key on (created_at, run_id).
        { (runs, _, _) ->
            listOf(
                "ALTER TABLE $runs ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0",
                "CREATE INDEX ${runs.substringAfterLast('.')}_created ON $runs (created_at, run_id)",
            )
        },
        // 4: no foreign key from the checkpoints to their run. Every write of a checkpoint already moves or locks its
        // run's row in the same statement or transaction and refuses the write when the row is missing (the fencing
        // rule), and a run is deleted with its row locked; the key's own check re-read and row-locked that row once
        // more per append (a lookup and a WAL record of its own). SQLite never enforced it (`foreign_keys` is off), so
        // only a database that does drops it.
        { (_, checkpoints, _, dropsForeignKey) ->
            if (dropsForeignKey) {
                listOf(
                    "ALTER TABLE $checkpoints DROP CONSTRAINT IF EXISTS " +
                        "${checkpoints.substringAfterLast('.')}_run_id_fkey",
                )
            } else {
                emptyList()
            }
        },
    )

    /** The tables a version changes, and whether the database enforces (and so can drop) a foreign key. */
    private data class Tables(
        val runs: String,
        val checkpoints: String,
        val nodeCache: String,
        val dropsForeignKey: Boolean,
    )

    /** The newest version; a database recording a newer one was written by a newer Trellis. */
    public val latest: Int get() = versions.size

    /**
     * Brings the tables up to [latest] inside the caller's transaction, which must already exclude concurrent
     * migrators (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: an advisory lock). [enforcesForeignKeys]: whether the database
     * enforced the foreign key the first version declared, which version 4 then drops (PostgreSQL).
     */
    public fun migrate(
        connection: Connection,
        versionTable: String,
        runs: String,
        checkpoints: String,
        nodeCache: String,
        description: String,
        enforcesForeignKeys: Boolean = false,
    ) {
        connection.createStatement().use {
            it.execute(
                "CREATE TABLE IF NOT EXISTS $versionTable (version INTEGER NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL)",
            )
        }
        val current = connection.createStatement().use { statement ->
            statement.executeQuery("SELECT MAX(version) FROM $versionTable").use { if (it.next()) it.getInt(1) else 0 }
        }
        check(current <= latest) {
            "The checkpoint tables in $description are at version $current, newer than this Trellis understands " +
                "($latest); upgrade Trellis, or point this store at another database."
        }
        for (version in current + 1..latest) {
            connection.createStatement().use { statement ->
                versions[version - 1](
                    Tables(runs, checkpoints, nodeCache, enforcesForeignKeys),
                ).forEach(statement::execute)
            }
            connection.prepareStatement("INSERT INTO $versionTable (version, applied_at) VALUES (?, ?)").use {
                it.setInt(1, version)
                it.setString(2, Instant.now().toString())
                it.executeUpdate()
            }
        }
    }
}
