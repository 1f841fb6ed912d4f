package dev.trellis.runtime.persistence

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.condition.EnabledIfSystemProperty
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.nio.file.Path

/**
 * The measurement of `bench/HISTORY.md`, "Checkpoint per step on PostgreSQL, one run (issue 36)": one run at a time
 * of a chain of 100 trivial nodes, without checkpoints, and checkpointing every step with `Durability.SYNC` and
 * `ASYNC`, on one `PostgresCheckpointStore` over a HikariCP pool; it prints the median wall time per run, the added
 * time per step, and the CPU per step of this JVM and of the pool's backends (from `/proc`, the server being local).
 * Not a timed test: it runs only when asked for, `-Dtrellis.measure.steps=<runs>`, and checks every run's result.
 */
class PostgresStepCostTest {
    object Chain : StateSchema("step-cost") {
        val count = key("count", default = 0, reducer = Reducer.sum())
    }

    private val chain: Graph = graph("step-cost", Chain) {
        val nodes = (1..STEPS).map { i -> node("n$i") { set(Chain.count, 1) } }
        start(nodes.first())
        nodes.zipWithNext { a, b -> a then b }
    }

    @Test
    @EnabledIfSystemProperty(named = "trellis.measure.steps", matches = "\\d+")
    fun `measure the cost of a checkpoint per step on PostgreSQL`() {
        val runs = System.getProperty("trellis.measure.steps").toInt()
        val schema = TestPostgres.newSchema()
        val app = "trellis-step-cost"
        val url = System.getenv(TestPostgres.URL_VARIABLE) ?: "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
        try {
            HikariDataSource(
                HikariConfig().apply {
                    jdbcUrl = url
                    maximumPoolSize = 2
                    minimumIdle = 2
                    poolName = app
                    addDataSourceProperty("ApplicationName", app)
                },
            ).use { pool ->
                val store = PostgresCheckpointStore(pool, schema)
                runBlocking { store.runs() }
                var n = 0

                fun measure(what: String, checkpointing: Checkpointing?): Figures {
                    repeat(runs / 2) { once(checkpointing, "warm-$what-${n++}") }
                    val wall = LongArray(runs)
                    val cpu0 = processCpu()
                    val backend0 = backendCpu(app)
                    for (i in 0 until runs) {
                        val t = System.nanoTime()
                        once(checkpointing, "$what-${n++}")
                        wall[i] = System.nanoTime() - t
                    }
                    wall.sort()
                    return Figures(
                        wall[runs / 2] / 1_000.0,
                        (processCpu() - cpu0) / 1_000.0 / runs,
                        (backendCpu(app) - backend0) / 1_000.0 / runs,
                    )
                }
                val plain = measure("plain", null)
                val sync = measure("sync", Checkpointing(store))
                val async = measure("async", Checkpointing(store, durability = Checkpointing.Durability.ASYNC))
                for ((what, f) in listOf("SYNC" to sync, "ASYNC" to async)) {
                    println(
                        (
                            "MEASURE chain of %d, %s: %.0f µs per run (plain %.0f): +%.1f µs per step; CPU per step " +
                                "+%.1f µs JVM, %.1f µs backends"
                        ).format(
                            STEPS,
                            what,
                            f.medianMicros,
                            plain.medianMicros,
                            (f.medianMicros - plain.medianMicros) / STEPS,
                            (f.jvmCpuMicros - plain.jvmCpuMicros) / STEPS,
                            f.backendCpuMicros / STEPS,
                        ),
                    )
                }
            }
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }

    private class Figures(val medianMicros: Double, val jvmCpuMicros: Double, val backendCpuMicros: Double)

    private fun once(checkpointing: Checkpointing?, runId: String) {
        val result = runBlocking { chain.invoke(options = RunOptions(runId = runId, checkpointing = checkpointing)) }
        result.state[Chain.count] shouldBe STEPS
    }

    /** This JVM's CPU time, ns. */
    private fun processCpu(): Long =
        (ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean).processCpuTime

    /** The CPU time (user + system, ns) of the backends serving [app], read from `/proc`. */
    private fun backendCpu(app: String): Long {
        val pids = TestPostgres.dataSource.connection.use { c ->
            c.prepareStatement("SELECT pid FROM pg_stat_activity WHERE application_name = ?").use {
                it.setString(1, app)
                it.executeQuery().use { rs -> buildList { while (rs.next()) add(rs.getInt(1)) } }
            }
        }
        val tick = 1_000_000_000L / 100 // USER_HZ
        return pids.sumOf { pid ->
            val stat = Path.of("/proc/$pid/stat")
            if (!Files.exists(stat)) return@sumOf 0L
            val fields = Files.readString(stat).substringAfterLast(')').trim().split(" ")
            (fields[11].toLong() + fields[12].toLong()) * tick
        }
    }

    private companion object {
        const val STEPS = 100
    }
}
