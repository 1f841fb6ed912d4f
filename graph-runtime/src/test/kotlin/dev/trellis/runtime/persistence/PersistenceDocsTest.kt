package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.takeSnapshot
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Test

/** The examples of docs/persistence.md, run as written. */
class PersistenceDocsTest {
    object Doc : StateSchema("doc") {
        val draft = key("draft", default = "")
        val approved = key<String?>("approved", default = null)
    }

    private val sent = ArrayList<String>()

    private val review = graph("review", Doc) {
        val write = node("write") { set(Doc.draft, "Dear customer, …") }
        val approve = node("approve") {
            val answer = interrupt("Send this draft? ${get(Doc.draft)}")
            set(Doc.approved, answer)
        }
        val send = node("send") { if (get(Doc.approved) == "yes") synchronized(sent) { sent += get(Doc.draft) } }
        start(write)
        write then approve
        approve then send
    }

    @Test
    fun `the interrupt example and the snapshot envelope shown in the guide`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val paused = review.invoke(options = RunOptions(runId = "ticket-7", checkpointing = Checkpointing(store)))
        paused.status shouldBe Status.INTERRUPTED
        paused.interrupts.single().payload shouldBe "Send this draft? Dear customer, …"

        val snapshot = review.takeSnapshot(store, "ticket-7", appData = buildJsonObject { put("user", "u-1") })
        val actual = Json.parseToJsonElement(snapshot.toJson()).jsonObject
        val expected = Json.parseToJsonElement(
            """
            {
              "scope": "trellis.run",
              "schemaVersion": 1,
              "createdAt": "2026-03-02T10:15:30.123456Z",
              "appData": {"user": "u-1"},
              "data": {
                "graphId": "review",
                "runId": "ticket-7",
                "status": "INTERRUPTED",
                "stateSchema": "doc",
                "stateVersion": 1,
                "state": {"draft": "Dear customer, …", "approved": null},
                "versions": {"draft": 1},
                "lastWriters": {"draft": "write"},
                "version": 1,
                "nodes": {"write": {"count": 1, "status": "COMPLETED"}, "approve": {"count": 0, "status": "INTERRUPTED"}},
                "ready": ["approve"],
                "totalExecutions": 1,
                "interrupts": [{"node": "approve", "payload": "Send this draft? Dear customer, …"}]
              }
            }
            """.trimIndent(),
        ).jsonObject
        JsonObject(actual + ("createdAt" to JsonPrimitive("2026-03-02T10:15:30.123456Z"))) shouldBe expected

        val done = review.resume("ticket-7", RunOptions(checkpointing = Checkpointing(store)), "yes")
        done.status shouldBe Status.COMPLETED
        sent shouldBe listOf("Dear customer, …")
    }

    @Test
    fun `resuming without an answer asks again`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        review.invoke(options = RunOptions(runId = "ticket-8", checkpointing = Checkpointing(store)))
        val again = review.resume("ticket-8", RunOptions(checkpointing = Checkpointing(store)))
        again.status shouldBe Status.INTERRUPTED
        again.interrupts.single().nodeId shouldBe "approve"
        again.node("write").executions shouldBe 1
        review.resume("ticket-8", RunOptions(checkpointing = Checkpointing(store)), "no").status shouldBe
            Status.COMPLETED
        sent shouldBe emptyList()
    }

    @Test
    fun `ON_EXIT saves one full checkpoint at the end, and nothing when the run dies before`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val onExit = Checkpointing(store, mode = Checkpointing.Mode.ON_EXIT)
        review.invoke(options = RunOptions(runId = "exit-1", checkpointing = onExit)).status shouldBe Status.INTERRUPTED
        store.history("exit-1").map { it.status to it.kind } shouldBe
            listOf("INTERRUPTED" to CheckpointRecord.Kind.FULL)
        review.resume("exit-1", RunOptions(checkpointing = onExit), "yes").status shouldBe Status.COMPLETED
        store.history("exit-1").map { it.status } shouldBe listOf("INTERRUPTED", "COMPLETED")

        val blocked = CompletableDeferred<Unit>()
        val stuck = graph("stuck", Doc) {
            val a = node("a") { set(Doc.draft, "x") }
            val b = node("b") {
                blocked.complete(Unit)
                awaitCancellation()
            }
            start(a)
            a then b
        }
        val job = launch { stuck.invoke(options = RunOptions(runId = "exit-2", checkpointing = onExit)) }
        blocked.await()
        job.cancelAndJoin() // the process "dies" in the middle
        store.latest("exit-2") shouldBe null
        shouldThrow<NoSuchElementException> {
            stuck.resume(
                "exit-2",
                RunOptions(checkpointing = onExit),
            )
        }.message shouldContain
            "no checkpoint of run 'exit-2'"
    }
}
