package dev.trellis.studio

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import dev.trellis.testing.ChildJvm
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files
import java.util.concurrent.TimeUnit

/**
 * The actions of the JSON API carried out, not only refused: a cancel, a resume of a cancelled, an interrupted and a
 * crashed run (a worker killed in a JVM of its own); and the timelines of composed runs, budgets and compensations
 * (the refusals and the other endpoints: `StudioApiTest`).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StudioActionsTest {
    private val store = InMemoryCheckpointStore()
    private val gate = CompletableDeferred<Unit>()
    private lateinit var studio: TrellisStudio
    private lateinit var client: StudioClient

    @BeforeAll
    fun seed() {
        runBlocking {
            val seed = Checkpointing(store, owner = "seed")
            TestGraphs.approval.invoke(
                stateOf(Doc.topic to "hills"),
                RunOptions(runId = "ask-1", checkpointing = seed),
            )
            TestGraphs.composed.invoke(options = RunOptions(runId = "composed-1", checkpointing = seed))
            assertThrows<GraphRunException> {
                TestGraphs.costly.invoke(options = RunOptions(runId = "costly-1", checkpointing = seed))
            }
        }
        val graphs = listOf(TestGraphs.approval, TestGraphs.composed, TestGraphs.costly, TestGraphs.gated(gate))
        studio = TrellisStudio.start(store, graphs = graphs)
        client = StudioClient(studio.url)
    }

    @AfterAll
    fun stop() {
        studio.close()
    }

    private fun JsonObject.str(name: String): String = this[name]!!.let {
        if (it is JsonArray) it.toString() else it.jsonPrimitive.content
    }

    private fun nodeStatus(runId: String, node: String): String = client.get("/api/v1/runs/$runId").obj["nodes"]!!
        .jsonArray.map { it.jsonObject }.single { it.str("nodeId") == node }.str("status")

    private fun executions(runId: String, node: String): Int = client.get("/api/v1/runs/$runId").obj["nodes"]!!
        .jsonArray.map { it.jsonObject }.single { it.str("nodeId") == node }.str("executions").toInt()

    @Test
    fun `a run the studio runs is cancelled, then resumed from its last checkpoint to completion`() {
        client.post("/api/v1/runs", """{"graphId":"gated","runId":"cancel-1"}""").status shouldBe 202
        runBlocking {
            while (nodeStatus("cancel-1", "wait") != "EXECUTING") kotlinx.coroutines.delay(50)
        }
        client.get("/api/v1/runs/cancel-1").obj.str("cancellable") shouldBe "true"
        client.post("/api/v1/runs/cancel-1/cancel").apply {
            status shouldBe 202
            obj.str("action") shouldBe "cancelling"
        }
        // A cancelled run saves no final checkpoint (docs/persistence.md): the store keeps it RUNNING, with no
        // lease; the studio, which cancelled it, says so.
        val cancelled = runBlocking {
            var run = client.get("/api/v1/runs/cancel-1").obj
            while (run.str("live") == "true" || run.str("cancelled") != "true") {
                kotlinx.coroutines.delay(50)
                run = client.get("/api/v1/runs/cancel-1").obj
            }
            run
        }
        cancelled.str("status") shouldBe "RUNNING"
        cancelled.str("leaseLive") shouldBe "false"
        nodeStatus("cancel-1", "wait") shouldBe "CANCELLED"
        gate.complete(Unit)
        client.post("/api/v1/runs/cancel-1/resume").status shouldBe 202
        client.awaitStatus("cancel-1", "COMPLETED").str("cancelled") shouldBe "false"
        executions("cancel-1", "first") shouldBe 1 // not run again: resumed from the checkpoint after it
        executions("cancel-1", "last") shouldBe 1
    }

    @Test
    fun `an interrupted run resumed asks again, under the studio's lease, and completes once answered`() {
        val before = client.get("/api/v1/runs/ask-1").obj
        client.post("/api/v1/runs/ask-1/resume").status shouldBe 202
        val asked = client.awaitStatus("ask-1", "INTERRUPTED")
        // Claimed through the store (a new epoch), it ran `approve` again, which asked again (one more checkpoint).
        asked.str("epoch").toLong() shouldBeGreaterThan before.str("epoch").toLong()
        asked.str("checkpoints").toLong() shouldBeGreaterThan before.str("checkpoints").toLong()
        asked["interrupts"]!!.jsonArray.single().jsonObject.str("payload") shouldContain "Publish 'About hills'"
        client.post("/api/v1/runs/ask-1/answer", """{"answer":"yes"}""").status shouldBe 202
        client.awaitStatus("ask-1", "COMPLETED")
        nodeStatus("ask-1", "publish") shouldBe "COMPLETED"
    }

    @Test
    fun `a crashed run is refused while its dead worker's lease is live, and resumed once it lapsed`() {
        val file = Files.createTempFile("studio-crash", ".db")
        val out = Files.createTempFile("studio-crash", ".log").toFile()
        try {
            val worker = ChildJvm.start(CrashedWorker::class.java, listOf(file.toString(), "crash-1"), out)
            runBlocking {
                val until = System.nanoTime() + 120_000_000_000L
                while (!out.readText().contains("hanging")) {
                    check(worker.isAlive && System.nanoTime() < until) {
                        "The worker did not reach 'hang': ${ChildJvm.output(out)}"
                    }
                    kotlinx.coroutines.delay(100)
                }
            }
            worker.destroyForcibly().waitFor(30, TimeUnit.SECONDS) shouldBe true
            SqliteCheckpointStore(file).use { sqlite ->
                TrellisStudio.start(sqlite, graphs = listOf(TestGraphs.crashy(hang = false))).use { over ->
                    val api = StudioClient(over.url)
                    val crashed = api.get("/api/v1/runs/crash-1").obj
                    crashed.str("status") shouldBe "RUNNING"
                    crashed.str("owner") shouldBe CrashedWorker.OWNER
                    // While the dead worker's lease is live (up to LEASE after its last renewal), the store refuses
                    // the studio's claim; the dead worker renews nothing, so its lease lapses and a claim takes over.
                    val first = api.post("/api/v1/runs/crash-1/resume")
                    if (first.status == 409) {
                        first.error shouldContain CrashedWorker.OWNER
                        runBlocking {
                            while (api.get("/api/v1/runs/crash-1").obj.str("leaseLive") == "true") {
                                kotlinx.coroutines.delay(100)
                            }
                        }
                        api.post("/api/v1/runs/crash-1/resume").status shouldBe 202
                    } else {
                        first.status shouldBe 202 // the lease had lapsed already (a slow machine): resumed at once
                    }
                    val done = api.awaitStatus("crash-1", "COMPLETED")
                    done.str("owner") shouldNotBe CrashedWorker.OWNER
                    val nodes = done["nodes"]!!.jsonArray.map { it.jsonObject }.associate {
                        it.str("nodeId") to it.str("executions")
                    }
                    nodes shouldBe mapOf("first" to "1", "hang" to "1", "last" to "1")
                }
            }
        } finally {
            Files.deleteIfExists(file)
            out.delete()
        }
    }

    @Test
    fun `a composed run's timeline has rows by path for each map task and the subgraph's child run`() {
        val timeline = client.get("/api/v1/runs/composed-1/timeline").obj
        val rows = timeline["executions"]!!.jsonArray.map { it.jsonObject.str("row") }
        rows.toSet() shouldBe setOf("run", "research[0]", "research[1]", "research[2]", "research[3]", "check")
        rows.count { it == "check" } shouldBe 3
        timeline.str("svg") shouldContain "data-row=\"check\""
        // Shown as recorded, the map node's bar covers its tasks: it began before them and ended after them.
        val executions = timeline["executions"]!!.jsonArray.map { it.jsonObject }
        val research = executions.single { it.str("path") == "research" }
        val tasks = executions.filter { it.str("path").startsWith("research[") }
        research.str("startUs").toLong() shouldBeLessThanOrEqual tasks.minOf { it.str("startUs").toLong() }
        research.str("startUs").toLong() + research.str("durationUs").toLong() shouldBeGreaterThanOrEqual
            tasks.maxOf { it.str("startUs").toLong() + it.str("durationUs").toLong() }
        val run = client.get("/api/v1/runs/composed-1").obj
        run.str("graphSvg") shouldContain "4 tasks"
        run["nodes"]!!.jsonArray.map { it.jsonObject }.single { it.str("nodeId") == "redo" }.str("status") shouldBe
            "NOT_RUN"
    }

    @Test
    fun `budget charges and compensations are marked, on a recorded run and a live one`() {
        fun marks(runId: String) = client.get("/api/v1/runs/$runId/timeline").obj["marks"]!!.jsonArray
            .map { it.jsonObject.str("kind") to it.jsonObject["path"]!!.jsonPrimitive.content }
        // Recorded (from checkpoints): the totals where they grew, the compensation where its outcome appears.
        marks("costly-1") shouldContainAll listOf("BUDGET" to "book", "BUDGET" to "pay", "COMPENSATION" to "book")
        client.post("/api/v1/runs", """{"graphId":"costly","runId":"costly-2"}""").status shouldBe 202
        val failed = client.awaitStatus("costly-2", "FAILED")
        failed.str("error") shouldContain "card declined"
        val live = client.get("/api/v1/runs/costly-2/timeline").obj
        live.str("approximate") shouldBe "false"
        marks("costly-2") shouldContainAll listOf("BUDGET" to "book", "BUDGET" to "pay", "COMPENSATION" to "book")
        live.str("svg") shouldContain "data-kind=\"BUDGET\""
        live.str("svg") shouldContain "data-kind=\"COMPENSATION\""
    }
}
