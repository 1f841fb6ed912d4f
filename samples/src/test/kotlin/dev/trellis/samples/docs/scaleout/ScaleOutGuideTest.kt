package dev.trellis.samples.docs.scaleout

import dev.trellis.fleet.FleetClient
import dev.trellis.fleet.FleetStatus
import dev.trellis.fleet.FleetWorker
import dev.trellis.fleet.FleetWorkerOptions
import dev.trellis.fleet.Submission
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.time.Duration

/** The Kotlin example of `docs/scale-out.md`, as the guide shows it, run on PostgreSQL and checked. */
class ScaleOutGuideTest {
    object Research : StateSchema("research") {
        val question = key<String>("question")
        val answer = key("answer", default = "")
    }

    /** research, version 2: `draft` writes an answer, `publish` asks before it is published. */
    private val research = graph("research", Research) {
        val draft = node("draft") { set(Research.answer, "Because of Rayleigh scattering: ${get(Research.question)}") }
        val publish = node("publish") { interrupt("Publish it?") }
        start(draft)
        draft then publish
    }

    @Test
    fun `a worker runs a submitted run, which pauses on its interrupt and completes once answered`(): Unit = runBlocking {
        val dataSource = TestPostgres.dataSource
        val schema = TestPostgres.newSchema()
        try {
            // Every worker process: register the graph versions it can run, then start.
            val worker = FleetWorker(dataSource, FleetWorkerOptions(schema = schema, concurrency = 32))
                .register(research, version = 2)
                .start()
            Runtime.getRuntime().addShutdownHook(Thread { worker.shutdown() }) // stop claiming, drain, wait

            // Any process (no graph needed): submit, await, answer.
            val client = FleetClient(dataSource, schema)
            val run = client.submit(Submission("research", 2, """{"question": "Why is the sky blue?"}""", "q-42"))
            val result = run.await() // COMPLETED, FAILED or PAUSED
            if (result.status == FleetStatus.PAUSED) run.answer("yes") // queued again, answered
            result.status shouldBe FleetStatus.PAUSED
            val done = run.await()
            done.status shouldBe FleetStatus.COMPLETED
            done.state(research)[Research.answer] shouldContain "Rayleigh"
            worker.shutdown(Duration.ofSeconds(30)) shouldBe true
            client.close()
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }
}
