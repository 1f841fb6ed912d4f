package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.CheckpointConflictException
import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.checkpoint
import dev.trellis.testing.TestClock
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.lang.reflect.InvocationTargetException
import java.lang.reflect.Proxy
import java.sql.Connection
import java.sql.SQLException
import java.time.Duration
import java.util.Collections
import javax.sql.DataSource

/**
 * The usual append on PostgreSQL is one statement in one round trip, committed on its own
 * (`docs/persistence-stores.md`, "The fencing rule"): what the store sends through JDBC, that a stale owner's
 * one-statement append changes nothing, that the bounds on waiting apply to it, and that the connection it borrowed
 * goes back with its own settings.
 */
class PostgresOneStatementAppendTest {
    private val schema = TestPostgres.newSchema()

    @AfterEach
    fun cleanUp() {
        TestPostgres.dropSchema(schema)
    }

    @Test
    fun `an append that continues the latest checkpoint sends one statement and commits nothing of its own`() =
        runBlocking<Unit> {
            val calls = Collections.synchronizedList(mutableListOf<String>())
            val store = PostgresCheckpointStore(recording(TestPostgres.dataSource, calls), schema)
            val lease = store.claim("run-1", "worker")
            store.append(lease, checkpoint("run-1", 1))
            calls.clear()
            store.append(lease, checkpoint("run-1", 2))
            val statements = calls.filter { it.startsWith("prepare ") || it == "commit" }
            statements shouldHaveSize 1
            statements.single() shouldContain "set_config('lock_timeout'"
            statements.single() shouldContain "INSERT INTO $schema.trellis_checkpoints"
            store.history("run-1") shouldContainExactly listOf(checkpoint("run-1", 1), checkpoint("run-1", 2))
        }

    @Test
    fun `a stale owner's one-statement append is refused and writes nothing, and a conflict still names it`() =
        runBlocking<Unit> {
            val clock = TestClock()
            val store = PostgresCheckpointStore(TestPostgres.dataSource, schema, clock)
            val stale = store.claim("run-2", "stale")
            store.append(stale, checkpoint("run-2", 1))
            clock.advance(Duration.ofSeconds(31))
            val taker = store.claim("run-2", "taker")
            // The stale append is the next sequence with the latest as parent: it goes the one-statement way first.
            val e = shouldThrow<FencedOutException> { store.append(stale, checkpoint("run-2", 2)) }
            e.message!! shouldContain "Another process ('taker') took over run 'run-2'"
            store.history("run-2").map { it.sequence } shouldContainExactly listOf(1L)
            store.append(taker, checkpoint("run-2", 2))
            shouldThrow<CheckpointConflictException> { store.append(taker, checkpoint("run-2", 4, parentSequence = 3)) }
            store.run("run-2")!!.latestSequence shouldBe 2L
        }

    @Test
    fun `the lock timeout bounds the one-statement append's wait for a locked run row`() = runBlocking<Unit> {
        val store = PostgresCheckpointStore(
            TestPostgres.dataSource,
            schema,
            lockTimeout = Duration.ofMillis(200),
            unavailableAfter = Duration.ZERO,
        )
        val lease = store.claim("run-3", "worker")
        store.append(lease, checkpoint("run-3", 1))
        TestPostgres.dataSource.connection.use { locker ->
            locker.autoCommit = false
            locker.prepareStatement("SELECT 1 FROM $schema.trellis_runs WHERE run_id = 'run-3' FOR UPDATE").use {
                it.executeQuery().close()
            }
            // Without the bound the append would wait for the locker until this safety net cancels it.
            val e = withTimeout(Duration.ofMinutes(2).toMillis()) {
                shouldThrow<CheckpointStoreUnavailableException> { store.append(lease, checkpoint("run-3", 2)) }
            }
            sqlStates(e) shouldContainExactly listOf("55P03")
            locker.rollback()
        }
        store.append(lease, checkpoint("run-3", 2))
        store.latest("run-3")!!.sequence shouldBe 2L
    }

    @Test
    fun `the statement timeout bounds the one-statement append on a connection whose session settings were reset`() =
        runBlocking<Unit> {
            TestPostgres.dataSource.connection.use { shared ->
                val store = PostgresCheckpointStore(
                    lending(shared),
                    schema,
                    statementTimeout = Duration.ofMillis(300),
                    unavailableAfter = Duration.ZERO,
                )
                val lease = store.claim("run-5", "worker")
                store.append(lease, checkpoint("run-5", 1))
                shared.createStatement().use {
                    it.execute(
                        "CREATE FUNCTION $schema.slow() RETURNS trigger LANGUAGE plpgsql AS " +
                            "'BEGIN PERFORM pg_sleep(60); RETURN NEW; END'",
                    )
                    it.execute(
                        "CREATE TRIGGER slow BEFORE INSERT ON $schema.trellis_checkpoints " +
                            "FOR EACH ROW EXECUTE FUNCTION $schema.slow()",
                    )
                    // Whatever the session had (a pool's reset, PgBouncer's DISCARD ALL): no timeout at all.
                    it.execute("RESET ALL")
                }
                val reset = settings(shared)
                reset[1] shouldBe "0"
                // Without the store's own bound the server would sleep for a minute; the client's network timeout
                // (statementTimeout + 5 s) would end the wait with a connection error (08006), not 57014.
                val e = shouldThrow<CheckpointStoreException> { store.append(lease, checkpoint("run-5", 2)) }
                sqlStates(e) shouldContainExactly listOf("57014")
                settings(shared) shouldBe reset
                shared.createStatement().use { it.execute("DROP TRIGGER slow ON $schema.trellis_checkpoints") }
                store.append(lease, checkpoint("run-5", 2))
                store.latest("run-5")!!.sequence shouldBe 2L
            }
        }

    @Test
    fun `the connection an append borrowed goes back in auto-commit with its session settings unchanged`() =
        runBlocking<Unit> {
            TestPostgres.dataSource.connection.use { shared ->
                val before = settings(shared)
                val store = PostgresCheckpointStore(lending(shared), schema)
                val lease = store.claim("run-4", "worker")
                store.append(lease, checkpoint("run-4", 1))
                store.append(lease, checkpoint("run-4", 2))
                settings(shared) shouldBe before
                shared.autoCommit shouldBe true
                store.latest("run-4")!!.sequence shouldBe 2L
            }
        }

    private fun settings(c: Connection): List<String> =
        listOf("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout").map { name ->
            c.createStatement().use { s ->
                s.executeQuery("SHOW $name").use {
                    it.next()
                    it.getString(1)
                }
            }
        }

    private fun sqlStates(e: Throwable): List<String> = generateSequence(e) { it.cause }
        .filterIsInstance<SQLException>().mapNotNull { it.sqlState }.toList()

    /** [source], noting each statement prepared (`prepare <sql>`) and each `commit` on its connections in [calls]. */
    private fun recording(source: DataSource, calls: MutableList<String>): DataSource =
        dataSource { wrap(source.connection, calls, closes = true) }

    /** A data source lending [shared] every time and keeping it open when the store closes it. */
    private fun lending(shared: Connection): DataSource = dataSource { wrap(shared, null, closes = false) }

    private fun dataSource(connect: () -> Connection): DataSource =
        Proxy.newProxyInstance(javaClass.classLoader, arrayOf(DataSource::class.java)) { _, method, _ ->
            when (method.name) {
                "getConnection" -> connect()
                "getLoginTimeout" -> 0
                else -> throw UnsupportedOperationException(method.name)
            }
        } as DataSource

    private fun wrap(c: Connection, calls: MutableList<String>?, closes: Boolean): Connection =
        Proxy.newProxyInstance(javaClass.classLoader, arrayOf(Connection::class.java)) { _, method, args ->
            when {
                method.name == "prepareStatement" -> calls?.add("prepare ${args[0]}")
                method.name == "commit" -> calls?.add("commit")
            }
            if (method.name == "close" && !closes) return@newProxyInstance null
            try {
                method.invoke(c, *(args ?: emptyArray()))
            } catch (e: InvocationTargetException) {
                throw e.targetException
            }
        } as Connection
}
