package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.NodeCache
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.checkpoint.postgres.PostgresNodeCache
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.checkpoint.sqlite.SqliteNodeCache
import dev.trellis.testing.TestPostgres
import java.nio.file.Files
import java.nio.file.Path
import java.time.Clock
import java.time.Duration

/** The SQL databases the runtime's persistence tests run against. */
enum class Backend { SQLITE, POSTGRES }

/**
 * One database (a temporary SQLite file, or a fresh PostgreSQL schema) on which a test opens any number of stores,
 * as separate processes would. [close] closes the stores and deletes the file or drops the schema.
 */
class SqlDatabase(val backend: Backend) : AutoCloseable {
    private val dir: Path? = if (backend ==
        Backend.SQLITE
    ) {
        Files.createTempDirectory("trellis-runtime-sqlite")
    } else {
        null
    }
    private val schema: String? = if (backend == Backend.POSTGRES) TestPostgres.newSchema() else null
    private val stores = ArrayList<CheckpointStore>()
    private val caches = ArrayList<NodeCache>()

    init {
        if (backend == Backend.POSTGRES) TestPostgres.dataSource // fail early, with the message naming the variable
    }

    /** A new store on this database: another "process". */
    @Synchronized
    fun store(clock: Clock = Clock.systemUTC(), leaseDuration: Duration = Duration.ofSeconds(30)): CheckpointStore {
        val store = when (backend) {
            Backend.SQLITE -> SqliteCheckpointStore(dir!!.resolve("runs.db"), clock, leaseDuration)
            Backend.POSTGRES -> PostgresCheckpointStore(TestPostgres.dataSource, schema!!, clock, leaseDuration)
        }
        stores += store
        return store
    }

    /** A new node cache on this database (`docs/semantics.md` §13.5): another "process". */
    @Synchronized
    fun cache(): NodeCache {
        val cache = when (backend) {
            Backend.SQLITE -> SqliteNodeCache(dir!!.resolve("runs.db"))
            Backend.POSTGRES -> PostgresNodeCache(TestPostgres.dataSource, schema!!)
        }
        caches += cache
        return cache
    }

    /**
     * Runs [sql] on the database outside any store, as an operator (or a corruption) would; `{runs}` and
     * `{checkpoints}` stand for the store's tables.
     */
    fun sql(sql: String) {
        val text = sql
            .replace("{runs}", if (schema == null) "trellis_runs" else "$schema.trellis_runs")
            .replace("{checkpoints}", if (schema == null) "trellis_checkpoints" else "$schema.trellis_checkpoints")
        val connection = if (dir != null) {
            java.sql.DriverManager.getConnection("jdbc:sqlite:${dir.resolve("runs.db")}")
        } else {
            TestPostgres.dataSource.connection
        }
        connection.use { c -> c.createStatement().use { it.execute(text) } }
    }

    override fun close() {
        stores.forEach { runCatching { it.close() } }
        caches.forEach { runCatching { it.close() } }
        if (dir != null) dir.toFile().deleteRecursively()
        if (schema != null) TestPostgres.dropSchema(schema)
    }
}
