package dev.trellis.fleet

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.testing.FaultProxy
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.time.Duration
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * Three workers run 1,000 runs while every connection they hold — the queue's, the checkpoint store's, the listener's —
 * goes through a [FaultProxy] that cuts, resets and stalls them at random: every run completes exactly once (one
 * recorded completion, each node executed once), no worker dies, no queue claim or store lease is left held.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class FaultyFleetTest {
    object Pair : StateSchema("faulty-fleet") {
        val id = key("id", default = "")
        val first = key("first", default = 0)
        val second = key("second", default = 0)
    }

    private val executions = ConcurrentHashMap<String, AtomicInteger>()
    private val completions = ConcurrentHashMap<String, AtomicInteger>()
    private val problems = AtomicInteger()

    private fun ran(id: String, node: String) {
        executions.computeIfAbsent("$id/$node") { AtomicInteger() }.incrementAndGet()
    }

    private val graph: Graph = graph("faulty-fleet", Pair) {
        val one = node("one") {
            ran(get(Pair.id), "one")
            set(Pair.first, 1)
        }
        val two = node("two") {
            ran(get(Pair.id), "two")
            set(Pair.second, get(Pair.first) + 1)
        }
        start(one)
        one then two
    }

    private val schema = TestPostgres.newSchema()
    private val proxy = FaultProxy(seed = 1000, target = TestPostgres.address)
    private val workerPool = HikariDataSource(
        HikariConfig().apply {
            dataSource = TestPostgres.through(proxy, "trellis-faulty-fleet-" + UUID.randomUUID().toString().take(8))
            maximumPoolSize = 30
            minimumIdle = 3
            connectionTimeout = Duration.ofSeconds(30).toMillis()
        },
    )
    private val clientPool = TestGraphs.pool(4)
    private val client = FleetClient(clientPool, schema)
    private val workers = mutableListOf<FleetWorker>()

    @AfterEach
    fun cleanUp() {
        proxy.stopChaos()
        workers.forEach { it.shutdown(Duration.ofSeconds(10)) }
        client.close()
        proxy.close()
        workerPool.close()
        clientPool.close()
        TestPostgres.dropSchema(schema)
    }

    private val observer = object : FleetObserver {
        override fun finished(runId: String, attempt: Int, status: FleetStatus) {
            if (status ==
                FleetStatus.COMPLETED
            ) {
                completions.computeIfAbsent(runId) { AtomicInteger() }.incrementAndGet()
            }
        }

        override fun problem(error: Throwable) {
            problems.incrementAndGet()
        }
    }

    @Test
    fun `1,000 runs on three workers complete exactly once while the proxy breaks their connections`(): Unit =
        runBlocking {
            repeat(3) { i ->
                workers += FleetWorker(
                    workerPool,
                    FleetWorkerOptions(
                        schema = schema,
                        workerId = "faulty-$i",
                        concurrency = 8,
                        leaseDuration = Duration.ofSeconds(10),
                        pollInterval = Duration.ofMillis(200),
                        observer = observer,
                        unavailableAfter = Duration.ofSeconds(60),
                    ),
                ).register(graph, 1).start()
            }
            proxy.startChaos(meanPause = Duration.ofMillis(50), maxStall = Duration.ofMillis(800))
            for (i in 1..RUNS) client.submit(Submission("faulty-fleet", 1, """{"id": "f-$i"}""", runId = "f-$i"))
            val deadline = System.nanoTime() + Duration.ofSeconds(240).toNanos()
            var counts = client.counts().single()
            while (counts.completed + counts.failed < RUNS && System.nanoTime() < deadline) {
                delay(500)
                counts = client.counts().single()
            }
            proxy.stopChaos()
            val faults = proxy.faults()
            withClue("faults $faults, counts $counts") {
                counts.completed shouldBe RUNS.toLong()
                counts.failed shouldBe 0L
                faults.values.sum() shouldBeGreaterThan 50
            }
            for (i in 1..RUNS) {
                withClue("f-$i") {
                    completions["f-$i"]?.get() shouldBe 1
                    executions["f-$i/one"]?.get() shouldBe 1
                    executions["f-$i/two"]?.get() shouldBe 1
                    client.run("f-$i").await().state(graph)[Pair.second] shouldBe 2
                }
            }
            client.store.runs().filter { it.owner != null }.map { it.runId }.shouldBeEmpty()
            client.list(FleetStatus.RUNNING).shouldBeEmpty()
            println("FaultyFleetTest: faults $faults, problems the workers survived: ${problems.get()}")
        }

    private companion object {
        const val RUNS = 1000
    }
}
