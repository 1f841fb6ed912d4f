package dev.trellis.samples

import com.github.ajalt.clikt.core.CliktCommand
import com.github.ajalt.clikt.core.CliktError
import com.github.ajalt.clikt.core.Context
import com.github.ajalt.clikt.parameters.options.default
import com.github.ajalt.clikt.parameters.options.option
import com.github.ajalt.clikt.parameters.types.int
import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.fleet.FleetClient
import dev.trellis.fleet.FleetStatus
import dev.trellis.fleet.FleetWorker
import dev.trellis.fleet.FleetWorkerOptions
import dev.trellis.fleet.Submission
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeRef
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import java.nio.file.Path
import java.time.Duration
import java.util.UUID
import kotlin.system.exitProcess

/**
 * `trellis-samples fleet [--workers N] [--runs M] [--url JDBC-URL]`: starts N local worker processes against a local
 * PostgreSQL, submits M runs of a five-node graph (every tenth asks for a review, answered here), shows progress and
 * stops the workers. Everything lives in a schema of its own, dropped at the end.
 */
internal class FleetSampleCommand : CliktCommand(name = "fleet") {
    private val workers by option("--workers", help = "Worker processes to start.").int().default(DEFAULT_WORKERS)
    private val runs by option("--runs", help = "Runs to submit.").int().default(DEFAULT_RUNS)
    private val url by option("--url", help = "JDBC URL of the PostgreSQL database.").default(DEFAULT_URL)

    override fun help(context: Context): String = "$DESCRIPTION."

    override fun run(): Unit = runBlocking {
        val schema = "trellis_sample_" + UUID.randomUUID().toString().replace("-", "").take(12)
        val pool = connect(url)
        val client = FleetClient(pool, schema)
        val java = Path.of(System.getProperty("java.home"), "bin", "java").toString()
        val children = (1..workers).map { i ->
            ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                FleetSample::class.java.name,
                url,
                schema,
                "worker-$i",
            )
                .redirectErrorStream(true)
                .start()
        }
        try {
            for ((i, child) in children.withIndex()) {
                val line = child.inputStream.bufferedReader().readLine()
                check(line == "READY") { "worker-${i + 1} did not start: $line" }
            }
            echo("$workers workers started (schema $schema); submitting $runs runs")
            val started = System.nanoTime()
            for (i in 0 until runs) client.submit(Submission("fleet-sample", 1, """{"item": $i}""", runId = "item-$i"))
            while (true) {
                for (paused in client.list(FleetStatus.PAUSED)) client.run(paused.runId).answer("approved")
                val c = client.counts().single()
                val seconds = (System.nanoTime() - started) / 1e9
                echo(
                    "  %5.1f s  queued %4d  running %3d  paused %3d  completed %4d  failed %d  (%.0f runs/s)".format(
                        seconds,
                        c.queued,
                        c.running,
                        c.paused,
                        c.completed,
                        c.failed,
                        c.completed / seconds,
                    ),
                )
                if (c.completed + c.failed == runs.toLong()) break
                delay(PROGRESS_MILLIS)
            }
            echo("done: ${client.counts().single().completed} of $runs runs completed")
        } finally {
            children.forEach { it.outputStream.close() }
            children.forEach { it.waitFor() }
            client.close()
            pool.connection.use { c -> c.createStatement().use { it.execute("DROP SCHEMA IF EXISTS $schema CASCADE") } }
            pool.close()
        }
    }

    /** Opens the pool, or fails in one line naming the database and what to do (no stack trace). */
    private fun connect(url: String): HikariDataSource =
        try {
            FleetSample.pool(url, 4)
        } catch (e: Exception) {
            val cause = generateSequence(e as Throwable) { it.cause }.last()
            throw CliktError(
                "fleet: cannot connect to PostgreSQL at $url (${cause.javaClass.simpleName}: ${cause.message}). " +
                    "Start a PostgreSQL server there or name another database with --url.",
                statusCode = 1,
            )
        }

    companion object {
        private const val PROGRESS_MILLIS = 500L
        const val DEFAULT_WORKERS: Int = 3
        const val DEFAULT_RUNS: Int = 300
        const val DEFAULT_URL: String = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
        const val DESCRIPTION: String =
            "start local worker processes on PostgreSQL, submit runs to them through the queue and show progress"
        const val USAGE: String =
            "fleet [--workers N (default $DEFAULT_WORKERS)] [--runs M (default $DEFAULT_RUNS)] " +
                "[--url JDBC-URL (default $DEFAULT_URL)]"
    }
}

/** The sample's graph and its worker process. */
internal object FleetSample {
    object Item : StateSchema("fleet-sample-item") {
        val item = key("item", default = 0)
        val score = key("score", default = 0)
        val review = key("review", default = "")
        val log = key("log", default = emptyList<String>(), reducer = dev.trellis.graph.Reducer.append())
    }

    fun graph(): Graph = graph("fleet-sample", Item) {
        fun step(id: String, body: suspend dev.trellis.graph.NodeScope.() -> Unit): NodeRef = node(id) {
            body()
            set(Item.log, listOf(id))
        }
        val fetch = step("fetch") { delay(5) }
        val parse = step("parse") { delay(5) }
        val score = step("score") { set(Item.score, get(Item.item) * 7 % 100) }
        val review = step("review") {
            if (get(Item.item) % 10 == 0) set(Item.review, interrupt("Publish item ${get(Item.item)}?"))
        }
        val publish = step("publish") { delay(5) }
        start(fetch)
        fetch then parse
        parse then score
        score then review
        review then publish
    }

    fun pool(url: String, size: Int): HikariDataSource = HikariDataSource(
        HikariConfig().apply {
            jdbcUrl = url
            maximumPoolSize = size
            minimumIdle = 1
        },
    )

    /** A worker process: `<url> <schema> <workerId>`; prints READY, stops (draining) when its stdin closes. */
    @JvmStatic
    fun main(args: Array<String>) {
        val (url, schema, id) = args
        val pool = pool(url, CONCURRENCY + 4)
        val worker = FleetWorker(
            pool,
            FleetWorkerOptions(
                schema = schema,
                workerId = id,
                concurrency = CONCURRENCY,
                leaseDuration = Duration.ofSeconds(10),
            ),
        ).register(graph(), 1).start()
        println("READY")
        System.out.flush()
        while (System.`in`.read() != -1) {
            // until the parent closes our standard input
        }
        worker.shutdown(Duration.ofSeconds(10))
        pool.close()
        exitProcess(0)
    }

    private const val CONCURRENCY = 16
}
