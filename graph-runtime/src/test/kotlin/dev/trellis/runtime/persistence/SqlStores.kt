package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.PostgresCheckpointStore
import dev.trellis.checkpoint.SqliteCheckpointStore
import org.postgresql.ds.PGSimpleDataSource
import java.nio.file.Files
import java.nio.file.Path
import java.sql.SQLException
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.time.ZoneId
import java.time.ZoneOffset
import java.util.UUID
import javax.sql.DataSource

/** The SQL databases the runtime's persistence tests run against. */
enum class Backend { SQLITE, POSTGRES }

/**
 * One database (a temporary SQLite file, or a fresh PostgreSQL schema) on which a test opens any number of stores,
 * as separate processes would. [close] closes the stores and deletes the file or drops the schema.
 */
class SqlDatabase(val backend: Backend) : AutoCloseable {
    private val dir: Path? = if (backend == Backend.SQLITE) Files.createTempDirectory("trellis-runtime-sqlite") else null
    private val schema: String? = if (backend == Backend.POSTGRES) TestPostgres.newSchema() else null
    private val stores = ArrayList<CheckpointStore>()

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

    override fun close() {
        stores.forEach { runCatching { it.close() } }
        if (dir != null) dir.toFile().deleteRecursively()
        if (schema != null) TestPostgres.dropSchema(schema)
    }
}

/**
 * The PostgreSQL server of the tests: `TRELLIS_TEST_POSTGRES_URL` if set, else
 * `jdbc:postgresql://127.0.0.1:5432/test?user=postgres`. When it does not answer, the tests fail with a message
 * naming the variable; they never skip.
 */
object TestPostgres {
    const val URL_VARIABLE = "TRELLIS_TEST_POSTGRES_URL"
    private const val DEFAULT_URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"

    val dataSource: DataSource by lazy { find() }

    fun newSchema(): String = "trellis_rt_test_" + UUID.randomUUID().toString().replace("-", "").take(16)

    fun dropSchema(schema: String) {
        dataSource.connection.use { c -> c.createStatement().use { it.execute("DROP SCHEMA IF EXISTS $schema CASCADE") } }
    }

    private fun find(): DataSource {
        val configured = System.getenv(URL_VARIABLE)?.takeIf { it.isNotBlank() }
        val url = configured ?: DEFAULT_URL
        val source = PGSimpleDataSource().apply {
            setURL(url)
            connectTimeout = 3
            loginTimeout = 3
        }
        try {
            source.connection.use { c -> c.createStatement().use { it.execute("SELECT 1") } }
        } catch (e: SQLException) {
            val origin = if (configured != null) "$URL_VARIABLE=$url" else "$URL_VARIABLE is not set and the default $url"
            throw AssertionError(
                "The PostgreSQL tests of graph-runtime need a server: $origin does not answer (${e.message?.trimEnd('.')}). " +
                    "Start a server or set $URL_VARIABLE, e.g. " +
                    "$URL_VARIABLE='jdbc:postgresql://127.0.0.1:5432/test?user=postgres', to a database the tests may create schemas in.",
                e,
            )
        }
        return source
    }
}

/** A clock the test moves by hand, so lease expiry is tested without sleeping. */
class TestClock(
    @Volatile var now: Instant = Instant.parse("2026-01-01T00:00:00Z"),
) : Clock() {
    fun advance(duration: Duration) {
        now = now.plus(duration)
    }

    override fun getZone(): ZoneId = ZoneOffset.UTC

    override fun withZone(zone: ZoneId?): Clock = this

    override fun instant(): Instant = now
}
