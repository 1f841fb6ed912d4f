package dev.trellis.fleet

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.testing.TestPostgres
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import java.io.File
import java.time.Instant
import javax.sql.DataSource

/**
 * Checkpoint per step on PostgreSQL, run by hand (bench/HISTORY.md says how): runs of a ten-node chain as the
 * runtime stores them with `EVERY_STEP` — a claim, 12 appends (the start, one per node, the end), a release — with
 * 1, 16 and 64 runs at once, with and without the store's group commit. Prints runs/s, appends/s, and the CPU time
 * per run of this JVM and of its PostgreSQL backends. Arguments: `[runs per round] [concurrencies, e.g. 1,16,64]`.
 */
object StoreBenchmark {
    private const val APPENDS = 12
    private val payload = "{\"kind\":\"delta\",\"writes\":[[\"steps\",1]]}".repeat(3)

    @JvmStatic
    fun main(args: Array<String>): Unit = runBlocking {
        val runs = args.getOrNull(0)?.toInt() ?: 2_000
        val levels = args.getOrNull(1)?.split(",")?.map(String::toInt) ?: listOf(1, 16, 64)
        println("checkpoint per step on PostgreSQL: $runs runs of $APPENDS appends per round, synchronous_commit on")
        for (concurrency in levels) {
            for (group in listOf(false, true)) round(runs, concurrency, group)
        }
    }

    private suspend fun round(runs: Int, concurrency: Int, group: Boolean) {
        val schema = TestPostgres.newSchema()
        val name = "store-bench-$schema"
        val pool = TestGraphs.pool(minOf(concurrency + 2, 16), applicationName = name)
        val store = PostgresCheckpointStore(pool, schema, groupCommit = group)
        try {
            suspend fun run(id: String) {
                val lease = store.claim(id, "bench")
                for (sequence in 1L..APPENDS) {
                    val record = CheckpointRecord(
                        id,
                        sequence,
                        if (sequence == 1L) null else sequence - 1,
                        "bench",
                        1,
                        Instant.now(),
                        "RUNNING",
                        if (sequence == 1L) CheckpointRecord.Kind.FULL else CheckpointRecord.Kind.DELTA,
                        payload,
                    )
                    store.append(lease, record)
                }
                store.release(lease)
            }

            suspend fun batch(prefix: String, n: Int) = coroutineScope {
                (0 until concurrency).map { lane ->
                    async(Dispatchers.IO) { for (i in lane until n step concurrency) run("$prefix-$i") }
                }.awaitAll()
            }
            batch("warm", runs / 4)
            val cpu0 = processCpuMillis()
            val backend0 = backendCpuMillis(pool, name)
            val start = System.nanoTime()
            batch("run", runs)
            val seconds = (System.nanoTime() - start) / 1e9
            val cpu = processCpuMillis() - cpu0
            val backend = backendCpuMillis(pool, name) - backend0
            println(
                (
                    "  %3d runs at once, group commit %-3s: %5.0f runs/s, %6.0f appends/s; CPU per run: " +
                        "JVM %.2f ms, PostgreSQL backends %.2f ms"
                ).format(
                    concurrency,
                    if (group) "on" else "off",
                    runs / seconds,
                    runs * APPENDS / seconds,
                    cpu.toDouble() / runs,
                    backend.toDouble() / runs,
                ),
            )
        } finally {
            pool.close()
            TestPostgres.dropSchema(schema)
        }
    }

    private fun processCpuMillis(): Long =
        ProcessHandle.current().info().totalCpuDuration().map { it.toMillis() }.orElse(-1L)

    /** CPU time of the backends of the sessions named [name], from `/proc` (the server runs on this host). */
    private fun backendCpuMillis(pool: DataSource, name: String): Long {
        val pids = pool.connection.use { c ->
            c.prepareStatement("SELECT pid FROM pg_stat_activity WHERE application_name = ?").use {
                it.setString(1, name)
                it.executeQuery().use { rs -> buildList { while (rs.next()) add(rs.getInt(1)) } }
            }
        }
        return pids.sumOf { pid ->
            val fields = File("/proc/$pid/stat").readText().substringAfterLast(") ").split(' ')
            (fields[11].toLong() + fields[12].toLong()) * 10L
        }
    }
}
