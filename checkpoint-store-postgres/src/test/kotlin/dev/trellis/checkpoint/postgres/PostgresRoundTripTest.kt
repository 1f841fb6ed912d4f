package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.checkpoint
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.postgresql.ds.PGSimpleDataSource
import java.lang.reflect.InvocationTargetException
import java.lang.reflect.Proxy
import java.sql.Connection
import java.time.Duration
import javax.sql.DataSource
import kotlin.concurrent.thread

/**
 * What one append costs on the wire (`docs/persistence-stores.md`, "The fencing rule" and "Which thread runs a
 * call"): the usual append is one round trip to the server — one burst of requests, one answer — counted on the
 * connection's socket ([CountingSockets]), and a caller in `runBlocking` sends it from its own thread; a cancellation
 * from another thread still cancels a statement that runs there.
 */
class PostgresRoundTripTest {
    private val schema = TestPostgres.newSchema()

    @AfterEach
    fun cleanUp() {
        TestPostgres.dropSchema(schema)
    }

    @Test
    fun `an append that continues the run is one round trip, sent from the thread of a caller in runBlocking`() {
        counted().use { c ->
            val store = PostgresCheckpointStore(lending(c), schema)
            runBlocking {
                val lease = store.claim("run-1", "worker")
                store.append(lease, checkpoint("run-1", 1))
                CountingSockets.reset()
                for (sequence in 2L..11L) store.append(lease, checkpoint("run-1", sequence))
                CountingSockets.roundTrips shouldBe 10
                CountingSockets.threads() shouldContainExactly listOf(Thread.currentThread().name)
            }
            runBlocking { store.latest("run-1")!!.sequence shouldBe 11L }
        }
    }

    @Test
    fun `an append from another dispatcher is one round trip too`() {
        counted().use { c ->
            val store = PostgresCheckpointStore(lending(c), schema)
            runBlocking(Dispatchers.Default) {
                val lease = store.claim("run-2", "worker")
                store.append(lease, checkpoint("run-2", 1))
                CountingSockets.reset()
                for (sequence in 2L..6L) store.append(lease, checkpoint("run-2", sequence))
                CountingSockets.roundTrips shouldBe 5
            }
        }
    }

    @Test
    fun `a cancellation from another thread cancels the statement of an append on the caller's thread`() {
        val store = PostgresCheckpointStore(
            TestPostgres.dataSource,
            schema,
            lockTimeout = Duration.ofMinutes(1),
            unavailableAfter = Duration.ZERO,
        )
        val lease = runBlocking {
            store.claim("run-3", "worker").also { store.append(it, checkpoint("run-3", 1)) }
        }
        TestPostgres.dataSource.connection.use { locker ->
            locker.autoCommit = false
            locker.prepareStatement("SELECT 1 FROM $schema.trellis_runs WHERE run_id = 'run-3' FOR UPDATE").use {
                it.executeQuery().close()
            }
            val started = System.nanoTime()
            runBlocking {
                var failure: Throwable? = null
                val append = launch {
                    try {
                        store.append(lease, checkpoint("run-3", 2))
                    } catch (e: Throwable) {
                        failure = e
                        throw e
                    }
                }
                // The append blocks this thread on the locked row; only another thread can cancel it.
                thread {
                    Thread.sleep(300)
                    append.cancel()
                }
                append.join()
                (failure is CancellationException) shouldBe true
            }
            // Cancelled by the server long before the one-minute lock timeout would have ended the wait.
            Duration.ofNanos(System.nanoTime() - started).toSeconds() shouldBeLessThan 30L
            locker.rollback()
        }
        runBlocking { store.latest("run-3")!!.sequence shouldBe 1L }
    }

    /** A connection to the test database whose socket counts round trips ([CountingSockets]). */
    private fun counted(): Connection {
        val source = TestPostgres.dataSource as PGSimpleDataSource
        return PGSimpleDataSource().apply {
            serverNames = source.serverNames
            portNumbers = source.portNumbers
            databaseName = source.databaseName
            user = source.user
            password = source.password
            socketFactory = CountingSockets::class.java.name
        }.connection
    }

    /** A data source lending [shared] every time and keeping it open when the store closes it. */
    private fun lending(shared: Connection): DataSource {
        val connection = Proxy.newProxyInstance(javaClass.classLoader, arrayOf(Connection::class.java)) { _, m, args ->
            if (m.name == "close") return@newProxyInstance null
            try {
                m.invoke(shared, *(args ?: emptyArray()))
            } catch (e: InvocationTargetException) {
                throw e.targetException
            }
        } as Connection
        return Proxy.newProxyInstance(javaClass.classLoader, arrayOf(DataSource::class.java)) { _, method, _ ->
            when (method.name) {
                "getConnection" -> connection
                "getLoginTimeout" -> 0
                else -> throw UnsupportedOperationException(method.name)
            }
        } as DataSource
    }
}
