package dev.trellis.fleet

import dev.trellis.fleet.TestGraphs.Greeting
import dev.trellis.graph.stateOf
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.time.Duration
import java.time.Instant
import java.util.concurrent.TimeUnit

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FleetClientTest {
    private val schema = TestPostgres.newSchema()
    private val pool = TestGraphs.pool(8)
    private val client = FleetClient(pool, schema)
    private val workers = mutableListOf<FleetWorker>()

    @AfterEach
    fun cleanUp() {
        workers.forEach { it.shutdown(Duration.ofSeconds(10)) }
        client.close()
        pool.close()
        TestPostgres.dropSchema(schema)
    }

    private fun worker(id: String = "w-${workers.size}", configure: FleetWorker.() -> Unit): FleetWorker =
        FleetWorker(pool, TestGraphs.options(schema, id)).apply(configure).start().also { workers += it }

    @Test
    fun `a submitted run is claimed, run and awaited from another client`(): Unit = runBlocking {
        worker { register(TestGraphs.greeting(), 1) }
        val run = client.submit(
            Submission.of(TestGraphs.greeting(), 1, stateOf(Greeting.person to "Ada"), runId = "r-1"),
        )
        val result = run.await()
        result.status shouldBe FleetStatus.COMPLETED
        result.attempt shouldBe 1
        result.state(TestGraphs.greeting())[Greeting.greeting] shouldBe "Hello, Ada"
        // The store holds the run's checkpoints, readable from the client's side.
        run.history().last().status shouldBe "COMPLETED"
        client.counts().single().completed shouldBe 1
    }

    @Test
    fun `readers see a run's row in the queue, and never create the tables`(): Unit = runBlocking {
        client.hasQueue() shouldBe false
        client.info("r-1") shouldBe null
        client.infos(listOf("r-1", "r-2")).shouldBeEmpty()
        client.lostClaims().shouldBeEmpty()
        client.hasQueue() shouldBe false // still none: reads create nothing

        worker { register(TestGraphs.greeting(), 1) }
        val before = Instant.now().minusSeconds(5)
        client.submit(Submission.of(TestGraphs.greeting(), 1, stateOf(Greeting.person to "Ida"), runId = "r-1")).await()
        client.hasQueue() shouldBe true
        val row = client.info("r-1")!!
        row.status shouldBe FleetStatus.COMPLETED
        row.graphId shouldBe "greeting"
        row.attempt shouldBe 1
        row.worker shouldBe null
        row.lostClaims shouldBe 0
        row.claimLapsed shouldBe false
        (row.submittedAt!! > before) shouldBe true
        (row.claimedAt!! >= row.submittedAt!!) shouldBe true
        (row.heartbeatAt!! >= row.claimedAt!!) shouldBe true
        (row.finishedAt!! >= row.claimedAt!!) shouldBe true
        client.infos(listOf("r-1", "nope")).map { it.runId } shouldBe listOf("r-1")
        client.list(FleetStatus.COMPLETED).single().claimedAt shouldBe row.claimedAt
    }

    @Test
    fun `an interrupted run pauses, is answered from the client, and completes`(): Unit = runBlocking {
        worker { register(TestGraphs.greeting(), 1) }
        val run = client.submit(Submission("greeting", 1, """{"name": "Bo", "ask": true}""", runId = "r-ask"))
        val paused = run.await()
        paused.status shouldBe FleetStatus.PAUSED
        paused.interrupts.single().nodeId shouldBe "approve"
        paused.interrupts.single().payload shouldBe "Approve Hello, Bo?"
        client.list(FleetStatus.PAUSED).map { it.runId } shouldBe listOf("r-ask")
        shouldThrow<IllegalArgumentException> { run.answer("greet", "yes") }.message shouldContain
            "no pending interrupt"
        run.answer("yes")
        val done = run.await()
        done.status shouldBe FleetStatus.COMPLETED
        done.attempt shouldBe 2
        done.state(TestGraphs.greeting())[Greeting.approved] shouldBe "yes"
        shouldThrow<IllegalStateException> { run.answer("again") }.message shouldContain "not PAUSED"
    }

    @Test
    fun `bad submissions fail with the problem named and write nothing`(): Unit = runBlocking {
        worker { register(TestGraphs.greeting(), 1) }
        client.submit(Submission("greeting", 1, """{"name": "Cy"}""", runId = "dup")).await()

        shouldThrow<IllegalArgumentException> { client.submit(Submission("nope", 1, "{}", runId = "x1")) }
            .message shouldContain "No worker has registered graph 'nope'"
        shouldThrow<IllegalArgumentException> { client.submit(Submission("greeting", 7, "{}", runId = "x2")) }
            .message shouldContain "registered versions: [1]"
        shouldThrow<IllegalArgumentException> { client.submit(Submission("greeting", 1, "{name:", runId = "x3")) }
            .message shouldContain "not valid JSON"
        shouldThrow<IllegalArgumentException> { client.submit(Submission("greeting", 1, "[1]", runId = "x4")) }
            .message shouldContain "must be a JSON object"
        shouldThrow<IllegalArgumentException> {
            client.submit(
                Submission("greeting", 1, """{"nmae": "x"}""", runId = "x5"),
            )
        }
            .message shouldContain "Unknown state key 'nmae'"
        shouldThrow<IllegalArgumentException> {
            client.submit(
                Submission("greeting", 1, """{"name": 3}""", runId = "x6"),
            )
        }
            .message shouldContain "must be a JSON string"
        shouldThrow<IllegalArgumentException> {
            client.submit(
                Submission("greeting", 1, """{"name": "Di"}""", runId = "dup"),
            )
        }
            .message shouldContain "already in the queue (COMPLETED)"

        client.counts().single().completed shouldBe 1
        client.counts().sumOf { it.queued + it.running + it.paused + it.failed } shouldBe 0
        for (id in listOf("x1", "x2", "x3", "x4", "x5", "x6")) {
            shouldThrow<NoSuchElementException> { client.run(id).result() }
            client.run(id).history().shouldBeEmpty()
        }
        client.run("dup").result().state(TestGraphs.greeting())[Greeting.person] shouldBe "Cy"
    }

    @Test
    fun `a run of version 1 waits for a worker of version 1 unless a migration is registered`(): Unit = runBlocking {
        // A worker of version 1 registers it, so that version 1 may be submitted, and stops.
        worker("v1") { register(TestGraphs.greeting(1), 1) }.shutdown()
        worker("v2") { register(TestGraphs.greeting(2), 2) }
        val old = client.submit(Submission("greeting", 1, """{"name": "Ed"}""", runId = "old"))
        val new = client.submit(Submission("greeting", 2, """{"name": "Flo"}""", runId = "new"))
        new.await().state(TestGraphs.greeting(2))[Greeting.greeting] shouldBe "Hi, Flo"
        // The version 2 worker claimed the newer run, submitted after: the older one is still queued.
        old.status() shouldBe FleetStatus.QUEUED

        worker("v2-migrating") { register(TestGraphs.greeting(2), 2, migratesFrom = setOf(1)) }
        old.await().state(TestGraphs.greeting(2))[Greeting.greeting] shouldBe "Hi, Ed"
    }

    @Test
    fun `priority orders the queue and not-before holds a run back`(): Unit = runBlocking {
        val far = Instant.now().plus(Duration.ofHours(1))
        // Registered through a worker that is stopped at once: the runs stay queued while we look.
        worker("registrar") { register(TestGraphs.greeting(), 1) }.shutdown()
        client.submit(Submission("greeting", 1, """{"name": "low"}""", runId = "low", priority = 0))
        client.submit(
            Submission("greeting", 1, """{"name": "later"}""", runId = "later", priority = 9, notBefore = far),
        )
        client.submit(Submission("greeting", 1, """{"name": "high"}""", runId = "high", priority = 5))
        val order = java.util.concurrent.CopyOnWriteArrayList<String>()
        FleetWorker(
            pool,
            FleetWorkerOptions(
                schema = schema,
                workerId = "serial",
                concurrency = 1,
                leaseDuration = Duration.ofSeconds(5),
                pollInterval = Duration.ofMillis(200),
                observer = object : FleetObserver {
                    override fun claimed(runId: String, attempt: Int) {
                        order += runId
                    }
                },
            ),
        ).register(TestGraphs.greeting(), 1).start().also { workers += it }
        client.run("low").await().status shouldBe FleetStatus.COMPLETED
        order shouldBe listOf("high", "low")
        client.run("later").status() shouldBe FleetStatus.QUEUED
    }

    @Test
    fun `retention deletes finished runs and their checkpoints`(): Unit = runBlocking {
        worker { register(TestGraphs.greeting(), 1) }
        client.submit(Submission("greeting", 1, """{"name": "Gus"}""", runId = "gone")).await()
        client.submit(Submission("greeting", 1, """{"name": "Hal", "ask": true}""", runId = "kept")).await()
        client.run("gone").history().size shouldBe 4
        client.purgeFinished(Duration.ZERO) shouldBe 1
        shouldThrow<NoSuchElementException> { client.run("gone").result() }
        client.run("gone").history().shouldBeEmpty()
        client.run("kept").status() shouldBe FleetStatus.PAUSED
    }
}
