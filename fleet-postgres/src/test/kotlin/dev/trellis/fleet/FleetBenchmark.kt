package dev.trellis.fleet

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.fleet.internal.Queue
import dev.trellis.fleet.internal.Tables
import dev.trellis.fleet.internal.registerGraph
import dev.trellis.fleet.internal.submit
import dev.trellis.testing.TestPostgres
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration
import java.time.Instant
import java.util.concurrent.TimeUnit

/**
 * The fleet's benchmark, run by hand (bench/HISTORY.md says how): throughput of a ten-node graph checkpointed at
 * every step with 1, 2 and 4 worker JVMs, the latency from submit to the first node's start, and the cost of the
 * statements a run makes. Arguments:
 * `[runs per round] [worker counts, comma-separated] [concurrency] [sync|async] [group|nogroup] [costs|nocosts]`;
 * `async` runs the workers' connections with `synchronous_commit = off` (docs/scale-out.md, "Tuning"), `nogroup`
 * turns the store's group commit off, `nocosts` skips the statement costs.
 */
object FleetBenchmark {
    @JvmStatic
    fun main(args: Array<String>): Unit = runBlocking {
        val runs = args.getOrNull(0)?.toInt() ?: 2_000
        val counts = args.getOrNull(1)?.split(",")?.map(String::toInt) ?: listOf(1, 2, 4)
        val concurrency = args.getOrNull(2)?.toInt() ?: 32
        val sync = args.getOrNull(3) != "async"
        val group = args.getOrNull(4) != "nogroup"
        val costs = args.getOrNull(5) != "nocosts"
        val dir = Files.createTempDirectory("fleet-bench")
        println(
            "fleet benchmark: $runs runs per round, workers $counts, concurrency $concurrency per worker, " +
                "synchronous_commit ${if (sync) "on" else "off"}, group commit ${if (group) "on" else "off"}",
        )
        for (n in counts) round(n, runs, concurrency, sync, group, dir)
        if (costs) statementCosts()
    }

    private suspend fun round(workers: Int, runs: Int, concurrency: Int, sync: Boolean, group: Boolean, dir: Path) {
        val schema = TestPostgres.newSchema()
        val pool = TestGraphs.pool(8)
        val client = FleetClient(pool, schema)
        val children = (1..workers).map { i ->
            val out = dir.resolve("$schema-w$i.out").toFile()
            val process = ProcessBuilder(
                java(),
                "-Xmx512m",
                "-cp",
                System.getProperty("java.class.path"),
                BenchChild::class.java.name,
                schema,
                "w$i",
                "$concurrency",
                "$sync",
                "$group",
            ).redirectErrorStream(true).redirectOutput(out).start()
            process to out
        }
        try {
            for ((process, out) in children) {
                while (!out.readLinesSafe().contains("READY")) {
                    check(process.isAlive) { out.readText() }
                    delay(50)
                }
            }
            // Warm-up: JIT the workers' paths.
            submitAll(client, "warm", runs / 4, null)
            awaitCompleted(client, runs / 4L)

            // Throughput: all runs become due at the same moment; measured by the database's clock.
            val due = Instant.now().plusSeconds(3)
            submitAll(client, "tp", runs, due)
            awaitCompleted(client, runs / 4L + runs)
            val (seconds, done) = pool.connection.use { c ->
                c.createStatement().use { s ->
                    s.executeQuery(
                        "SELECT extract(epoch FROM max(finished_at) - min(not_before)), count(*) FROM " +
                            "$schema.trellis_fleet_runs WHERE run_id LIKE 'tp-%'",
                    ).use { rs ->
                        rs.next()
                        rs.getDouble(1) to rs.getLong(2)
                    }
                }
            }
            // Latency: one run at a time, spaced, submit → first node start (same host, same wall clock).
            val latencies = mutableListOf<Long>()
            repeat(LATENCY_SAMPLES) { i ->
                val submitted = System.currentTimeMillis()
                val run = client.submit(Submission("bench", 1, "{}", runId = "lat-$i"))
                val result = run.await(pollMillis = 2_000)
                val started = Json.parseToJsonElement(result.output!!).jsonObject.getValue("started").jsonPrimitive.long
                latencies += started - submitted
                delay(LATENCY_GAP_MILLIS)
            }
            latencies.sort()
            println(
                (
                    "workers=$workers: %d runs in %.2f s = %.0f runs/s; " +
                        "submit->first node p50=%d ms p99=%d ms (n=%d)"
                ).format(
                    done,
                    seconds,
                    done / seconds,
                    latencies[latencies.size / 2],
                    latencies[(latencies.size * 99) / 100],
                    latencies.size,
                ),
            )
        } finally {
            children.forEach { (process, _) ->
                process.outputStream.close()
                if (!process.waitFor(20, TimeUnit.SECONDS)) process.destroyForcibly()
            }

            // The workers' own CPU time (JIT and GC included) per run they ran: what a run costs on the worker side.
            fun reported(prefix: String) = children.sumOf { (_, out) ->
                out.readLinesSafe().firstOrNull { it.startsWith(prefix) }?.removePrefix(prefix)?.toLong() ?: 0L
            }
            val cpuMillis = reported("CPU ")
            val backendMillis = reported("PGCPU ")
            val total = runs / 4 + runs + LATENCY_SAMPLES
            println(
                "  CPU per run: workers %.2f ms, their PostgreSQL backends %.2f ms (%d runs; %.0f s + %.0f s)".format(
                    cpuMillis.toDouble() / total,
                    backendMillis.toDouble() / total,
                    total,
                    cpuMillis / 1e3,
                    backendMillis / 1e3,
                ),
            )
            client.close()
            pool.close()
            TestPostgres.dropSchema(schema)
        }
    }

    private suspend fun submitAll(client: FleetClient, prefix: String, n: Int, notBefore: Instant?) {
        for (i in 0 until n) client.submit(Submission("bench", 1, "{}", runId = "$prefix-$i", notBefore = notBefore))
    }

    private suspend fun awaitCompleted(client: FleetClient, n: Long) {
        while (client.counts().sumOf { it.completed } < n) delay(AWAIT_POLL_MILLIS)
    }

    /** The cost of each kind of statement a run makes, one at a time on one pool (no contention). */
    private suspend fun statementCosts() {
        val schema = TestPostgres.newSchema()
        val pool = TestGraphs.pool(4)
        try {
            val store = PostgresCheckpointStore(pool, schema, leaseDuration = Duration.ofSeconds(30))
            val queue = Queue(pool, Tables(schema))
            queue.registerGraph("bench", 1, "fleet-bench", "{}")
            val n = 2_000
            val payload = "{\"kind\":\"delta\",\"writes\":[[\"steps\",1]]}".repeat(3)

            fun time(label: String, perRun: Int, block: (Int) -> Unit) {
                repeat(n / 10) { block(it + n) } // warm-up
                val start = System.nanoTime()
                repeat(n) { block(it) }
                val micros = (System.nanoTime() - start) / 1_000.0 / n
                println(
                    "  %-34s %7.0f µs each, %2d per run = %6.0f µs per run".format(
                        label,
                        micros,
                        perRun,
                        micros * perRun,
                    ),
                )
            }
            println("statement costs (sequential, one connection at a time):")
            val leases = HashMap<Int, dev.trellis.checkpoint.Lease>()
            time("submit (check + insert + notify)", 1) { queue.submit(Submission("bench", 1, "{}", runId = "c-$it")) }
            time("claim (SKIP LOCKED, one run)", 1) { queue.claim("w", arrayOf("bench@1"), 1, 30_000) }
            time("store claim (lease)", 1) { leases[it] = runBlocking { store.claim("s-$it", "w") } }
            time("checkpoint append", 12) { i ->
                val record = CheckpointRecord(
                    "s-$i",
                    1,
                    null,
                    "bench",
                    1,
                    Instant.now(),
                    "RUNNING",
                    CheckpointRecord.Kind.FULL,
                    payload,
                )
                runBlocking { store.append(leases.getValue(i), record) }
            }
            time("store latest", 2) { runBlocking { store.latest("s-$it") } }
            time("store release", 1) { runBlocking { store.release(leases.getValue(it)) } }
            time("finish (fenced update + notify)", 1) {
                queue.finish("w", "c-$it", 1, FleetStatus.COMPLETED, "{}", null, emptyList())
            }
            time("heartbeat (32 runs)", 0) {
                queue.heartbeat("w", Array(32) { j -> "c-${(it + j) % n}" }, 30_000, Duration.ofSeconds(30))
            }
        } finally {
            pool.close()
            TestPostgres.dropSchema(schema)
        }
    }

    private fun java(): String = Path.of(System.getProperty("java.home"), "bin", "java").toString()

    private fun File.readLinesSafe(): List<String> = if (exists()) readLines() else emptyList()

    private const val LATENCY_SAMPLES = 200
    private const val LATENCY_GAP_MILLIS = 10L
    private const val AWAIT_POLL_MILLIS = 250L
}
