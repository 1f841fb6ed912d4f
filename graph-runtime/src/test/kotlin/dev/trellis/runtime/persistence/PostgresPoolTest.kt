package dev.trellis.runtime.persistence

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.condition.EnabledIfSystemProperty
import java.time.Duration
import java.util.concurrent.TimeUnit

/**
 * The PostgreSQL store on the pool users run it with (HikariCP): many concurrent runs on a few connections, and a
 * cancelled operation cancels its statement through the pool's connection proxy. The load measurement of
 * `bench/HISTORY.md` is here too; it runs only when asked for (`-Dtrellis.measure.runs=10000`).
 */
class PostgresPoolTest {
    object Steps : StateSchema("pool-steps") {
        val done = key("done", default = 0)
    }

    private val steps = graph("pool-steps", Steps) {
        val a = node("a") {
            delay(20)
            set(Steps.done, 1)
        }
        val b = node("b") {
            delay(20)
            set(Steps.done, get(Steps.done) + 1)
        }
        val c = node("c") { set(Steps.done, get(Steps.done) + 1) }
        start(a)
        a then b
        b then c
    }

    private fun pool(size: Int): HikariDataSource {
        val url = System.getenv(TestPostgres.URL_VARIABLE) ?: "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
        TestPostgres.dataSource // fails with instructions when there is no server
        return HikariDataSource(
            HikariConfig().apply {
                jdbcUrl = url
                maximumPoolSize = size
                connectionTimeout = 30_000
                poolName = "trellis-test"
            },
        )
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    fun `hundreds of concurrent checkpointed runs share a pool of four connections`() {
        val schema = TestPostgres.newSchema()
        try {
            pool(4).use { pool ->
                val store = PostgresCheckpointStore(pool, schema)
                runBlocking {
                    val results = (0 until 300).map { i ->
                        async {
                            steps.invoke(
                                options = RunOptions(runId = "pooled-$i", checkpointing = Checkpointing(store)),
                            )
                        }
                    }.awaitAll()
                    results.count { it.status == Status.COMPLETED && it.state[Steps.done] == 3 } shouldBe 300
                    val runs = store.runs()
                    runs.size shouldBe 300
                    runs.count { it.owner != null } shouldBe 0
                    runs.count { it.latestStatus == "COMPLETED" } shouldBe 300
                }
            }
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    fun `a cancelled claim on a locked row cancels its statement through the pool's proxy`() {
        val schema = TestPostgres.newSchema()
        try {
            pool(2).use { pool ->
                val store = PostgresCheckpointStore(pool, schema, lockTimeout = Duration.ofMinutes(5))
                runBlocking { store.release(store.claim("locked", "first")) }
                TestPostgres.dataSource.connection.use { holder ->
                    holder.autoCommit = false
                    holder.createStatement().use {
                        it.executeQuery("SELECT * FROM $schema.trellis_runs WHERE run_id = 'locked' FOR UPDATE").close()
                    }
                    runBlocking { withTimeoutOrNull(1_000) { store.claim("locked", "second") } } shouldBe null
                    holder.rollback()
                }
                // The pool's connections still serve: the cancelled statement left none broken or borrowed.
                runBlocking { repeat(4) { store.release(store.claim("locked", "second")) } }
                pool.hikariPoolMXBean.activeConnections shouldBe 0
            }
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }

    /**
     * The load measurement of `bench/HISTORY.md`: N concurrent checkpointed runs (every step) on a pool of 32.
     * Not a timed test: it checks that every run completed and released its lease, and prints the figures.
     * `-Dtrellis.measure.runs=10000 -Dtest=PostgresPoolTest#measure*`
     */
    @Test
    @EnabledIfSystemProperty(named = "trellis.measure.runs", matches = "\\d+")
    fun `measure concurrent checkpointed runs on PostgreSQL`() {
        val count = System.getProperty("trellis.measure.runs").toInt()
        val poolSize = System.getProperty("trellis.measure.pool", "32").toInt()
        val schema = TestPostgres.newSchema()
        try {
            pool(poolSize).use { pool ->
                val store = PostgresCheckpointStore(pool, schema)
                runBlocking { store.runs() } // creates the tables outside the measurement
                val started = System.nanoTime()
                val results = runBlocking {
                    (0 until count).map { i ->
                        async {
                            steps.invoke(
                                options = RunOptions(runId = "load-$i", checkpointing = Checkpointing(store)),
                            )
                        }
                    }.awaitAll()
                }
                val seconds = (System.nanoTime() - started) / 1e9
                val checkpoints = TestPostgres.dataSource.connection.use { c ->
                    c.createStatement().use { s ->
                        s.executeQuery("SELECT COUNT(*) FROM $schema.trellis_checkpoints").use {
                            it.next()
                            it.getLong(1)
                        }
                    }
                }
                results.count { it.status == Status.COMPLETED } shouldBe count
                runBlocking { store.runs().count { it.owner != null } } shouldBe 0
                println(
                    "MEASURE PostgreSQL: %d concurrent runs, pool %d: %.1f s, %.0f runs/s, %d checkpoints, %.0f checkpoints/s"
                        .format(count, poolSize, seconds, count / seconds, checkpoints, checkpoints / seconds),
                )
            }
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }
}
