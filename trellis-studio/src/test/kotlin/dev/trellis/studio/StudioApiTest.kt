package dev.trellis.studio

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.RunInfo
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.invoke
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.doubles.plusOrMinus
import io.kotest.matchers.shouldBe
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

/** The JSON API as a contract: every endpoint, its answers and its refusals, over a real server. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StudioApiTest {
    private val store = InMemoryCheckpointStore()
    private lateinit var studio: TrellisStudio
    private lateinit var client: StudioClient

    @BeforeAll
    fun seed() {
        runBlocking {
            val seed = Checkpointing(store, owner = "seed")
            TestGraphs.simple.invoke(
                stateOf(Doc.topic to "trees"),
                RunOptions(runId = "simple-1", checkpointing = seed),
            )
            TestGraphs.approval.invoke(
                stateOf(Doc.topic to "rivers"),
                RunOptions(runId = "approval-1", checkpointing = seed),
            )
            TestGraphs.fanout.invoke(options = RunOptions(runId = "fanout-1", checkpointing = seed))
            TestGraphs.approval.invoke(
                stateOf(Doc.topic to "owned"),
                RunOptions(runId = "owned-1", checkpointing = seed),
            )
            store.claim("owned-1", "worker-b")
        }
        studio = TrellisStudio.start(store, graphs = listOf(TestGraphs.simple, TestGraphs.approval, TestGraphs.fanout))
        client = StudioClient(studio.url)
    }

    @AfterAll
    fun stop() {
        studio.close()
    }

    private fun ids(reply: StudioClient.Reply) =
        reply.obj["runs"]!!.jsonArray.map { it.jsonObject["runId"]!!.jsonPrimitive.content }

    @Test
    fun `the API names itself and lists the registered graphs with their keys`() {
        client.get("/api/v1").obj["api"]!!.jsonPrimitive.content shouldBe "v1"
        val graphs = client.get("/api/v1/graphs").json.jsonArray
        graphs.map { it.jsonObject["graphId"]!!.jsonPrimitive.content } shouldBe listOf("approval", "fanout", "simple")
        graphs[0].jsonObject["keys"]!!.jsonArray.map { it.jsonObject["name"]!!.jsonPrimitive.content } shouldContainAll
            listOf("topic", "words")
    }

    @Test
    fun `runs are listed with status, graph, times, interrupts and owner, filtered and paged`() {
        val all = client.get("/api/v1/runs")
        all.status shouldBe 200
        ids(all) shouldContainAll listOf("approval-1", "fanout-1", "owned-1", "simple-1")
        val approval = all.obj["runs"]!!.jsonArray.map { it.jsonObject }.single { it.str("runId") == "approval-1" }
        approval.str("status") shouldBe "INTERRUPTED"
        approval.str("graphId") shouldBe "approval"
        approval["interrupts"]!!.jsonArray.single().jsonObject.str("node") shouldBe "approve"
        approval.str("startedAt").isNotEmpty() shouldBe true
        val owned = all.obj["runs"]!!.jsonArray.map { it.jsonObject }.single { it.str("runId") == "owned-1" }
        owned.str("owner") shouldBe "worker-b"
        owned.str("leaseLive") shouldBe "true"

        // Newest first by default (the order is in the answer); by run id on request.
        all.obj.str("order") shouldBe "newest"
        val byTime = runBlocking { ids(all).map { store.run(it)!! } }
        byTime shouldBe byTime.sortedWith(compareByDescending<RunInfo> { it.createdAt }.thenByDescending { it.runId })
        val byId = client.get("/api/v1/runs?order=id")
        byId.obj.str("order") shouldBe "id"
        ids(byId) shouldBe ids(byId).sorted()
        ids(byId).toSet() shouldBe ids(all).toSet()
        client.get("/api/v1/runs?order=sideways").apply {
            status shouldBe 400
            error shouldContain "'order'"
        }
        ids(client.get("/api/v1/runs?status=INTERRUPTED")) shouldBe listOf("owned-1", "approval-1")
        ids(client.get("/api/v1/runs?graph=fanout")) shouldBe listOf("fanout-1")
        val first = client.get("/api/v1/runs?limit=1")
        ids(first).size shouldBe 1
        val next = first.obj.str("next")
        ids(client.get("/api/v1/runs?limit=1&after=$next")).single() shouldBe
            ids(client.get("/api/v1/runs?limit=2"))[1]
    }

    @Test
    fun `bad list parameters are refused naming the parameter`() {
        client.get("/api/v1/runs?status=SLEEPING").apply {
            status shouldBe 400
            error shouldContain "'status'"
        }
        client.get("/api/v1/runs?limit=zero").apply {
            status shouldBe 400
            error shouldContain "'limit'"
        }
    }

    @Test
    fun `an unknown run is a 404 that says so, on every endpoint`() {
        val paths =
            listOf("", "/timeline", "/checkpoints", "/checkpoints/1", "/diff?from=1&to=2", "/events", "/events/stream")
        for (path in paths) {
            val reply = client.get("/api/v1/runs/nope$path")
            reply.status shouldBe 404
            reply.error shouldContain "'nope'"
        }
        for (path in listOf("/answer", "/resume", "/cancel", "/fork")) {
            client.post("/api/v1/runs/nope$path", """{"sequence":1,"answer":"x"}""").apply {
                status shouldBe 404
                error shouldContain "No run 'nope'"
            }
        }
        client.post("/api/v1/runs", """{"graphId":"nope"}""").apply {
            status shouldBe 404
            error shouldContain "Graph 'nope' is not registered"
        }
        client.post("/api/v1/runs", """{"input":{}}""").apply {
            status shouldBe 400
            error shouldContain "graphId"
        }
    }

    @Test
    fun `a run shows its graph with each node's status and count`() {
        val run = client.get("/api/v1/runs/simple-1").obj
        run.str("status") shouldBe "COMPLETED"
        run.str("graphSvg") shouldContain "data-node=\"write\""
        run["nodes"]!!.jsonArray.map { it.jsonObject.str("nodeId") to it.jsonObject.str("status") } shouldBe
            listOf("write" to "COMPLETED", "count" to "COMPLETED")
        val approval = client.get("/api/v1/runs/approval-1").obj
        approval["nodes"]!!.jsonArray.single {
            it.jsonObject.str(
                "nodeId",
            ) == "publish"
        }.jsonObject.str("status") shouldBe
            "NOT_RUN"
        approval.str("graphSvg") shouldContain "not run"
    }

    @Test
    fun `a map run's timeline has a row per task`() {
        val timeline = client.get("/api/v1/runs/fanout-1/timeline").obj
        val rows = timeline["executions"]!!.jsonArray.map { it.jsonObject.str("row") }.toSet()
        rows shouldContainAll listOf("run", "research[0]", "research[1]", "research[2]", "research[3]")
        timeline["executions"]!!.jsonArray.count { it.jsonObject.str("nodeId") == "search" } shouldBe 4
        timeline.str("svg") shouldContain "data-row=\"research[3]\""
    }

    @Test
    fun `a timeline is drawn whole or zoomed to a window, with times in microseconds`() {
        val whole = client.get("/api/v1/runs/fanout-1/timeline").obj
        val total = whole.str("durationUs").toLong()
        val window = whole["window"]!!.jsonObject
        window.str("fromUs") shouldBe "0"
        window.str("toUs").toLong() shouldBe total
        window.str("zoom").toDouble() shouldBe 1.0
        val executions = whole["executions"]!!.jsonArray.map { it.jsonObject }
        executions.count { it.str("nodeId") == "search" } shouldBe 4
        val join = executions.single { it.str("nodeId") == "join" }
        // A window around `join` alone: the other bars are left out of the drawing, the list stays whole.
        val from = join.str("startUs").toLong()
        val to = from + maxOf(join.str("durationUs").toLong(), 1)
        val zoomed = client.get("/api/v1/runs/fanout-1/timeline?from=$from&to=$to").obj
        zoomed["window"]!!.jsonObject.str("fromUs") shouldBe "$from"
        val ratio = total.toDouble() / (to - from)
        zoomed["window"]!!.jsonObject.str("zoom").toDouble() shouldBe ratio.plusOrMinus(ratio * 0.01 + 0.01)
        zoomed.str("svg") shouldContain "data-path=\"join\""
        zoomed.str("svg").contains("data-path=\"plan\"") shouldBe false
        zoomed["executions"]!!.jsonArray.size shouldBe executions.size
        client.get("/api/v1/runs/fanout-1/timeline?to=${total * 10}").obj["window"]!!.jsonObject.str("toUs") shouldBe
            "$total"
        client.get("/api/v1/runs/fanout-1/timeline?from=5&to=5").apply {
            status shouldBe 400
            error shouldContain "'to'"
        }
        client.get("/api/v1/runs/fanout-1/timeline?from=-1").apply {
            status shouldBe 400
            error shouldContain "'from'"
        }
    }

    @Test
    fun `checkpoints list their write sets, states read at each one, and two diff`() {
        val checkpoints = client.get("/api/v1/runs/simple-1/checkpoints").json.jsonArray
        val last = checkpoints.last().jsonObject
        checkpoints.any {
            cp ->
            cp.jsonObject["writes"]!!.jsonArray.any { it.jsonObject.str("key") == "words" }
        } shouldBe
            true
        val state = client.get("/api/v1/runs/simple-1/checkpoints/${last.str("sequence")}").obj["state"]!!.jsonObject
        state["words"]!!.jsonPrimitive.content shouldBe "2"
        val diff = client.get("/api/v1/runs/simple-1/diff?from=1&to=${last.str("sequence")}").obj
        val changed =
            diff["changed"]!!.jsonArray.map { it.jsonObject } + diff["added"]!!.jsonArray.map { it.jsonObject }
        changed.map { it.str("key") } shouldContainAll listOf("draft", "words", "notes")
        val notes = changed.single { it.str("key") == "notes" }
        val shown = (notes["to"] ?: notes["value"])!!.jsonObject
        shown.str("folded") shouldBe "true"
        client.get("/api/v1/runs/simple-1/checkpoints/99").apply {
            status shouldBe 404
            error shouldContain "no checkpoint 99"
        }
        client.get("/api/v1/runs/simple-1/checkpoints/x").status shouldBe 400
        client.get("/api/v1/runs/simple-1/diff?from=1").status shouldBe 400
    }

    @Test
    fun `answering an interrupt resumes the run to completion`() {
        client.post("/api/v1/runs/simple-1/answer", """{"answer":"yes"}""").apply {
            status shouldBe 409
            error shouldContain "no pending interrupt"
        }
        client.post("/api/v1/runs/approval-1/answer", """{}""").status shouldBe 400
        val seeded = runBlocking {
            TestGraphs.approval.invoke(
                stateOf(Doc.topic to "lakes"),
                RunOptions(runId = "approval-2", checkpointing = Checkpointing(store, owner = "seed")),
            )
        }
        seeded.status.name shouldBe "INTERRUPTED"
        client.post("/api/v1/runs/approval-2/answer", """{"answer":"yes"}""").status shouldBe 202
        client.awaitStatus("approval-2", "COMPLETED")
        val last = client.get("/api/v1/runs/approval-2").obj.str("checkpoints")
        client.get("/api/v1/runs/approval-2/checkpoints/$last").obj["state"]!!.jsonObject["approved"]!!.jsonPrimitive
            .content shouldBe "true"
        client.get("/api/v1/runs/approval-2/events").obj["events"]!!.jsonArray.last().jsonObject.str("type") shouldBe
            "RunCompleted"
    }

    @Test
    fun `a fork validates edited values through the keys' serializers, then runs`() {
        client.post("/api/v1/runs/simple-1/fork", """{"sequence":1,"state":{"words":"many"}}""").apply {
            status shouldBe 400
            error shouldContain "'words'"
            error shouldContain "Int"
        }
        client.post("/api/v1/runs/simple-1/fork", """{"sequence":1,"state":{"colour":"red"}}""").apply {
            status shouldBe 400
            error shouldContain "'colour'"
        }
        client.post("/api/v1/runs/simple-1/fork", """{"state":{}}""").status shouldBe 400
        client.post("/api/v1/runs/simple-1/fork", """{"sequence":42}""").status shouldBe 404
        client.post("/api/v1/runs/simple-1/fork", "not json").status shouldBe 400
        val fork = client.post(
            "/api/v1/runs/simple-1/fork",
            """{"sequence":1,"state":{"topic":"forests"},"runId":"fork-1"}""",
        )
        fork.status shouldBe 202
        fork.obj.str("runId") shouldBe "fork-1"
        val done = client.awaitStatus("fork-1", "COMPLETED")
        done.str("forkedFrom") shouldBe "simple-1#1"
        val last = done.str("checkpoints")
        client.get(
            "/api/v1/runs/fork-1/checkpoints/$last",
        ).obj["state"]!!.jsonObject["draft"]!!.jsonPrimitive.content shouldBe
            "About forests"
    }

    @Test
    fun `a fork of a run another worker owns is refused, naming the worker`() {
        client.post("/api/v1/runs/owned-1/fork", """{"sequence":1}""").apply {
            status shouldBe 409
            error shouldContain "worker-b"
        }
        client.post("/api/v1/runs/owned-1/resume").apply {
            status shouldBe 409
            error shouldContain "worker-b"
        }
        client.post("/api/v1/runs/owned-1/answer", """{"answer":"yes"}""").apply {
            status shouldBe 409
            error shouldContain "worker-b"
        }
    }

    @Test
    fun `cancel and resume refuse what they cannot do`() {
        client.post("/api/v1/runs/simple-1/cancel").apply {
            status shouldBe 409
            error shouldContain "not running in this studio"
        }
        client.post("/api/v1/runs/simple-1/resume").apply {
            status shouldBe 409
            error shouldContain "already ended"
        }
    }

    @Test
    fun `a run started through the studio streams its events live and can be cancelled`() {
        val gate = CompletableDeferred<Unit>()
        val gated = TestGraphs.gated(gate)
        studio.register(gated)
        val handle = studio.start(gated, runId = "gated-1")
        val stream = java.net.URI.create(studio.url.trimEnd('/') + "/api/v1/runs/gated-1/events/stream").toURL()
        val connection = stream.openConnection()
        connection.getHeaderField("Content-Type") shouldContain "text/event-stream"
        val reader = connection.getInputStream().bufferedReader()
        val seen = ArrayList<String>()
        while (seen.none { it.contains("\"nodeId\":\"wait\"") && it.contains("NodeStarted") }) {
            seen += reader.readLine() ?: error("The stream ended early: $seen")
        }
        client.get("/api/v1/runs/gated-1").obj.str("live") shouldBe "true"
        gate.complete(Unit)
        while (true) {
            val line = reader.readLine() ?: break
            seen += line
            if (line == "event: end") break
        }
        seen.any { it.contains("RunCompleted") } shouldBe true
        runBlocking { handle.await() }.status.name shouldBe "COMPLETED"
        client.post("/api/v1/runs/gated-1/cancel").status shouldBe 409
        client.post("/api/v1/runs", """{"graphId":"simple","input":{"topic":7}}""").apply {
            status shouldBe 400
            error shouldContain "'topic'"
        }
        val started = client.post(
            "/api/v1/runs",
            """{"graphId":"simple","input":{"topic":"moss"},"runId":"started-1"}""",
        )
        started.status shouldBe 202
        client.awaitStatus("started-1", "COMPLETED")
    }

    @Test
    fun `a studio on another address needs a token, and requests without it get 401`() {
        assertThrows<IllegalArgumentException> {
            TrellisStudio.builder(
                store,
            ).host("0.0.0.0").start()
        }.message!! shouldContain
            "token"
        val secured = TrellisStudio.builder(store).host("0.0.0.0").token("s3cret-token").start()
        try {
            secured.url shouldContain "?token=s3cret-token"
            StudioClient(secured.url).get("/api/v1/runs").status shouldBe 401
            StudioClient(secured.url).get("/").status shouldBe 401
            StudioClient(secured.url, token = "s3cret-token").get("/api/v1/runs").status shouldBe 200
            StudioClient(secured.url, token = "wrong-token").get("/api/v1/runs").status shouldBe 401
        } finally {
            secured.close()
        }
    }

    private fun JsonObject.str(name: String): String = this[name]!!.let {
        if (it is JsonArray) it.toString() else it.jsonPrimitive.content
    }
}
