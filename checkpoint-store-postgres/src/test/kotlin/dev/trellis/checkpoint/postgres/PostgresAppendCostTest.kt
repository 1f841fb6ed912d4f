package dev.trellis.checkpoint.postgres

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.condition.EnabledIfSystemProperty
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.nio.file.Path
import java.time.Instant

/**
 * The measurement of `bench/HISTORY.md`, "Issue 36, PostgreSQL append without the foreign key and with two bounds"
 * (there from a scratch harness loading two builds side by side; this is the same for one build): what one append of
 * `PostgresCheckpointBench.storeOnly` costs — a run claimed, appends of a 450-character payload from `runBlocking`, the
 * release — over a HikariCP pool of two, as the median wall time per append, the CPU time of the calling thread and of
 * the whole JVM per append, the CPU time of the pool's backends per append (`/proc/<pid>/schedstat`, the server being
 * local) and the round trips per append ([CountingSockets]). With `-Dtrellis.measure.flush=off` the pool's sessions
 * commit with `synchronous_commit = off`: the same statements and round trips without the disk's flush, which on a
 * shared machine is the noisiest part. Not a timed test: it runs only when asked for,
 * `-Dtrellis.measure.appends=<appends per round>`, and checks that every append was stored.
 */
class PostgresAppendCostTest {
    @Test
    @EnabledIfSystemProperty(named = "trellis.measure.appends", matches = "\\d+")
    fun `measure the cost of one append on PostgreSQL`() {
        val appends = System.getProperty("trellis.measure.appends").toInt()
        val rounds = System.getProperty("trellis.measure.rounds", "5").toInt()
        val flush = System.getProperty("trellis.measure.flush", "on")
        val schema = TestPostgres.newSchema()
        val app = "trellis-append-cost"
        val url = System.getenv(TestPostgres.URL_VARIABLE) ?: "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
        val threads = ManagementFactory.getThreadMXBean()
        val os = ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean
        try {
            HikariDataSource(
                HikariConfig().apply {
                    jdbcUrl = url
                    maximumPoolSize = 2
                    minimumIdle = 2
                    poolName = app
                    addDataSourceProperty("ApplicationName", app)
                    addDataSourceProperty("socketFactory", CountingSockets::class.java.name)
                    if (flush == "off") addDataSourceProperty("options", "-c synchronous_commit=off")
                },
            ).use { pool ->
                val store = PostgresCheckpointStore(pool, schema)
                var n = 0

                fun round(): Figures = runBlocking {
                    val runId = "run-${n++}"
                    val lease = store.claim(runId, "worker")
                    val payload = "x".repeat(PAYLOAD_CHARS)
                    val createdAt = Instant.now()
                    val wall = LongArray(appends)
                    CountingSockets.reset()
                    val thread0 = threads.currentThreadCpuTime
                    val process0 = os.processCpuTime
                    val backend0 = backendCpu(app)
                    for (sequence in 1L..appends) {
                        val t = System.nanoTime()
                        store.append(lease, record(runId, sequence, createdAt, payload))
                        wall[(sequence - 1).toInt()] = System.nanoTime() - t
                    }
                    val figures = Figures(
                        wall.sorted()[appends / 2] / 1_000.0,
                        (threads.currentThreadCpuTime - thread0) / 1_000.0 / appends,
                        (os.processCpuTime - process0) / 1_000.0 / appends,
                        (backendCpu(app) - backend0) / 1_000.0 / appends,
                        CountingSockets.roundTrips.toDouble() / appends,
                    )
                    store.release(lease)
                    store.latest(runId)!!.sequence shouldBe appends.toLong()
                    figures
                }
                repeat(2) { round() }
                val figures = (1..rounds).map { round() }
                println("append cost, flush $flush, $appends appends per round ($rounds rounds), per append:")
                println("  wall median µs | calling thread CPU µs | JVM CPU µs | backend CPU µs | round trips")
                for (f in figures) {
                    println(
                        "  %8.1f | %8.1f | %8.1f | %8.1f | %5.2f".format(
                            f.wallMedian,
                            f.threadCpu,
                            f.jvmCpu,
                            f.backendCpu,
                            f.roundTrips,
                        ),
                    )
                }
            }
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }

    private class Figures(
        val wallMedian: Double,
        val threadCpu: Double,
        val jvmCpu: Double,
        val backendCpu: Double,
        val roundTrips: Double,
    )

    private fun record(runId: String, sequence: Long, createdAt: Instant, payload: String) = CheckpointRecord(
        runId = runId,
        sequence = sequence,
        parentSequence = if (sequence == 1L) null else sequence - 1,
        graphId = "cost",
        schemaVersion = 1,
        createdAt = createdAt,
        status = "RUNNING",
        kind = if (sequence == 1L) CheckpointRecord.Kind.FULL else CheckpointRecord.Kind.DELTA,
        payload = payload,
    )

    /** The CPU time in nanoseconds that the backends serving [app] have run so far (`/proc/<pid>/schedstat`). */
    private fun backendCpu(app: String): Long = TestPostgres.dataSource.connection.use { c ->
        c.prepareStatement("SELECT pid FROM pg_stat_activity WHERE application_name = ?").use { s ->
            s.setString(1, app)
            s.executeQuery().use { rs ->
                var total = 0L
                while (rs.next()) {
                    total += Files.readString(Path.of("/proc/${rs.getInt(1)}/schedstat")).trim().split(' ')[0].toLong()
                }
                total
            }
        }
    }

    private companion object {
        const val PAYLOAD_CHARS = 450
    }
}
