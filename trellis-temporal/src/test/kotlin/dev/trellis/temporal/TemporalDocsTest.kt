package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import io.temporal.testing.TestWorkflowEnvironment
import io.temporal.worker.WorkerFactory
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.time.Duration
import kotlin.time.Duration.Companion.minutes

/** The Kotlin snippets of docs/temporal.md, as they are there, run. */
class TemporalDocsTest {
    object Research : StateSchema("docs-research") {
        val question = key<String>("question")
        val notes = key("notes", default = "")
    }

    object Doc : StateSchema("docs-approval") {
        val answer = key("answer", default = "")
    }

    private val research: Graph = graph("research", Research) {
        val search = node("search") {
            emit("searching")
            set(Research.notes, "notes on ${get(Research.question)}")
        }
        start(search)
    }

    private val approval: Graph = graph("approval", Doc) {
        val approve = node("approve") { set(Doc.answer, interrupt("Publish the draft?")) }
        start(approve)
    }

    @Test
    fun `the worker and runner snippet runs`(): Unit = runBlocking {
        val env = TestWorkflowEnvironment.newInstance()
        env.start()
        try {
            val client = env.workflowClient
            val live = InMemoryLiveEvents()
            val factory = WorkerFactory.newInstance(client)
            val worker = factory.newWorker("research")
            TemporalWorkers.register(worker, listOf(research), TemporalOptions(liveEvents = live))
            factory.start()

            val runner = TemporalRunner(client, "research", live)
            val run = runner.start(research, stateOf(Research.question to "Why is the sky blue?"), runId = "order-42")
            run.events().collect { println(it) } // live: RunStarted ... RunCompleted, each event once
            val result = run.await() // suspends; run.awaitBlocking() blocks
            println(result.status) // COMPLETED, FAILED or CANCELLED, as a local run ends
            println(result.state[Research.notes])

            result.status shouldBe Status.COMPLETED
            result.state[Research.notes] shouldBe "notes on Why is the sky blue?"
            factory.shutdownNow()
        } finally {
            env.close()
        }
    }

    @Test
    fun `the interrupt snippet runs`(): Unit = runBlocking {
        TemporalHarness(listOf(approval)).use { temporal ->
            val run = temporal.runner.start(approval, runId = "docs-approve")
            val deadline = System.nanoTime() + 60_000_000_000L
            while (run.interrupts().isEmpty() && System.nanoTime() < deadline) Thread.sleep(20)

            val asked = run.interrupts() // {approve=Publish the draft?}: node path to what it asked
            run.answer("approve", "yes") // a workflow Update; the node runs again and interrupt() returns "yes"

            asked shouldBe mapOf("approve" to "Publish the draft?")
            run.await().state[Doc.answer] shouldBe "yes"
        }
    }

    @Test
    fun `the versioning snippet registers two versions, new runs take the latest`() {
        val researchV1 = research
        val researchV2 = graph("research", Research) {
            val search = node("search") { set(Research.notes, "v2 notes on ${get(Research.question)}") }
            start(search)
        }
        TestWorkflowEnvironment.newInstance().use { env ->
            val worker = env.newWorker("research")
            TemporalWorkers.register(worker, GraphVersions().add(1, researchV1).add(2, researchV2))
            env.start()
            val input = stateOf(Research.question to "Why is the sky blue?")
            val result = TemporalRunner(env.workflowClient, "research").start(researchV2, input).awaitBlocking()
            result.state[Research.notes] shouldBe "v2 notes on Why is the sky blue?"
        }
    }

    @Test
    fun `the continue-as-new snippet sets the history threshold`() {
        TestWorkflowEnvironment.newInstance().use { env ->
            val worker = env.newWorker("research")
            TemporalWorkers.register(worker, listOf(research), TemporalOptions(continueAsNewAfterEvents = 5_000))
            env.start()
            val input = stateOf(Research.question to "Why is the sky blue?")
            val result = TemporalRunner(env.workflowClient, "research").start(research, input).awaitBlocking()
            result.state[Research.notes] shouldBe "notes on Why is the sky blue?"
        }
    }

    @Test
    fun `the local activities and heartbeats snippet registers its options`() {
        val research = graph("research", Research) {
            val classify = node("classify") { set(Research.notes, "a question") }
            val search = node("search") { set(Research.notes, "notes on ${get(Research.question)}") }
            start(classify)
            classify then search
        }
        TestWorkflowEnvironment.newInstance().use { env ->
            val worker = env.newWorker("research")
            TemporalWorkers.register(
                worker,
                listOf(research),
                TemporalOptions(localNodes = setOf("classify"), heartbeatTimeout = Duration.ofSeconds(30)),
            )
            env.start()
            val input = stateOf(Research.question to "Why is the sky blue?")
            val result = TemporalRunner(env.workflowClient, "research").start(research, input).awaitBlocking()
            result.state[Research.notes] shouldBe "notes on Why is the sky blue?"
        }
    }

    @Test
    fun `the budget snippet runs`(): Unit = runBlocking {
        val research = graph("research", Research) {
            val search = node("search") {
                charge("usd", 0.42)
                set(Research.notes, "notes on ${get(Research.question)}")
            }
            start(search)
        }
        TemporalHarness(listOf(research)).use { temporal ->
            val runner = temporal.runner
            val input = stateOf(Research.question to "Why is the sky blue?")

            val run = runner.start(research, input, budget = Budget().withMeter("usd", 2.0).withMaxWallTime(10.minutes))
            println(run.await().meters) // the run's totals by meter, e.g. {usd=0.42}

            run.await().meters shouldBe mapOf("usd" to 0.42)
        }
    }

    @Test
    fun `the live events across JVMs snippet streams through PostgreSQL`(): Unit = runBlocking {
        val dataSource = TestPostgres.dataSource
        TestWorkflowEnvironment.newInstance().use { env ->
            val worker = env.newWorker("research")
            val client = env.workflowClient
            val input = stateOf(Research.question to "Why is the sky blue?")

            // On every worker and every caller, each in its own JVM: the same database (and table).
            val live = PostgresLiveEvents(dataSource) // table trellis_live_events, created when missing
            TemporalWorkers.register(worker, listOf(research), TemporalOptions(liveEvents = live))
            env.start()
            val runner = TemporalRunner(client, "research", live)
            val events = runner.start(research, input).events().toList() // RunStarted ... RunCompleted, each once

            events.map { it.javaClass.simpleName } shouldBe listOf(
                "RunStarted",
                "NodeStarted",
                "Custom",
                "NodeCompleted",
                "RunCompleted",
            )
            (events.last() as RunEvent.RunCompleted).result.state[Research.notes] shouldBe
                "notes on Why is the sky blue?"
            live.close()
        }
    }
}
