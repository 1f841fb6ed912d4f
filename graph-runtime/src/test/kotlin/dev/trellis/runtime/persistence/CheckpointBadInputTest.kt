package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.fork
import dev.trellis.runtime.invoke
import dev.trellis.runtime.loadSnapshot
import dev.trellis.runtime.resume
import dev.trellis.runtime.stateAt
import dev.trellis.runtime.takeSnapshot
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.time.Instant

/** Checkpoints that cannot be loaded fail with [CheckpointFormatException] naming them; nothing is half-loaded. */
class CheckpointBadInputTest {
    object Doc : StateSchema("bad-doc") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val approved = key<String?>("approved", default = null)
    }

    private val pipeline = graph("bad-pipeline", Doc) {
        val plan = node("plan") { set(Doc.log, listOf("plan")) }
        val approve = node("approve") { set(Doc.approved, interrupt("ok?")) }
        val publish = node("publish") { set(Doc.log, listOf("publish")) }
        start(plan)
        plan then approve
        approve then publish
    }

    private fun options(store: InMemoryCheckpointStore, runId: String? = null) =
        RunOptions(runId = runId, checkpointing = Checkpointing(store, owner = "resumer", fullSnapshotEvery = 10))

    /** Appends [payload] as the next checkpoint of [runId], as a buggy or malicious writer would. */
    private suspend fun appendRaw(
        store: InMemoryCheckpointStore,
        runId: String,
        kind: CheckpointRecord.Kind,
        payload: String,
    ): Long {
        val latest = store.latest(runId)!!
        val lease = store.claim(runId, "tamperer")
        val sequence = latest.sequence + 1
        store.append(
            lease,
            CheckpointRecord(
                runId,
                sequence,
                latest.sequence,
                pipeline.id,
                1,
                Instant.now(),
                "INTERRUPTED",
                kind,
                payload,
            ),
        )
        store.release(lease)
        return sequence
    }

    @Test
    fun `a corrupt checkpoint fails resume with CheckpointFormatException naming it, and nothing is loaded`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        pipeline.invoke(options = options(store, "bad-1")).status shouldBe Status.INTERRUPTED
        val good = store.latest("bad-1")!!.sequence
        val bad = appendRaw(store, "bad-1", CheckpointRecord.Kind.FULL, "{\"scope\": \"trellis.run\", garbage")
        val before = store.history("bad-1").map { it.sequence }

        val error =
            shouldThrow<CheckpointFormatException> {
                pipeline.resume(
                    "bad-1",
                    options(store),
                    mapOf("approve" to "yes"),
                )
            }
        error.message shouldContain "checkpoint $bad of run 'bad-1'"
        error.message shouldContain "corrupt"
        shouldThrow<CheckpointFormatException> { pipeline.stateAt(store, "bad-1") }.message shouldContain
            "checkpoint $bad of run 'bad-1'"

        // nothing happened: no checkpoint written, no lease taken (another owner can claim at once)
        store.history("bad-1").map { it.sequence } shouldBe before
        store.release(store.claim("bad-1", "someone-else"))
        // the checkpoints before the corrupt one still load, and a fork from one continues the run
        pipeline.stateAt(store, "bad-1", good)[Doc.log] shouldContainExactly listOf("plan")
        val forked = pipeline.fork("bad-1", good, options(store, "bad-1-fork"))
        forked.status shouldBe Status.INTERRUPTED
        pipeline.resume("bad-1-fork", options(store), "yes").state[Doc.log] shouldContainExactly
            listOf("plan", "publish")
    }

    @Test
    fun `a delta whose data is not a run position names the checkpoint`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        pipeline.invoke(options = options(store, "bad-2"))
        val envelope = """{"scope":"trellis.run","schemaVersion":1,"createdAt":"2026-01-01T00:00:00Z",""" +
            """"appData":{},"data":{"nonsense":1}}"""
        val bad = appendRaw(store, "bad-2", CheckpointRecord.Kind.DELTA, envelope)
        val error = shouldThrow<CheckpointFormatException> { pipeline.resume("bad-2", options(store), "yes") }
        error.message shouldContain "checkpoint $bad of run 'bad-2'"
        error.message shouldContain "not a run position"
    }

    @Test
    fun `a checkpoint of another graph is refused with a clear error`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val other = graph("other-graph", Doc) {
            val ask = node("ask") { set(Doc.approved, interrupt("?")) }
            start(ask)
        }
        other.invoke(options = options(store, "foreign")).status shouldBe Status.INTERRUPTED
        val error =
            shouldThrow<CheckpointFormatException> {
                pipeline.resume(
                    "foreign",
                    options(store),
                    mapOf("approve" to "yes"),
                )
            }
        error.message shouldContain "run 'foreign'"
        error.message shouldContain "belongs to graph 'other-graph', not to graph 'bad-pipeline'"
        shouldThrow<CheckpointFormatException> { pipeline.stateAt(store, "foreign") }.message shouldContain
            "belongs to graph 'other-graph'"
        // the right graph still resumes it
        other.resume("foreign", options(store), "yes").state[Doc.approved] shouldBe "yes"
    }

    /** The pipeline as a later version of the code has it: `publish` was removed. */
    private val withoutPublish = graph("bad-pipeline", Doc) {
        val plan = node("plan") { set(Doc.log, listOf("plan")) }
        val approve = node("approve") { set(Doc.approved, interrupt("ok?")) }
        start(plan)
        plan then approve
    }

    @Test
    fun `a checkpoint whose ready nodes name a node the graph no longer has fails with CheckpointFormatException`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        // Drained after plan: approve is ready and never ran, so it is only in the checkpoint's frontier.
        val control = RunControl()
        val twoSteps = graph("bad-pipeline", Doc) {
            val plan = node("plan") {
                set(Doc.log, listOf("plan"))
                control.drain()
            }
            val publish = node("publish") { set(Doc.log, listOf("publish")) }
            start(plan)
            plan then publish
        }
        val drained = twoSteps.invoke(
            options = RunOptions(runId = "gone-1", control = control, checkpointing = Checkpointing(store)),
        )
        drained.status shouldBe Status.INTERRUPTED
        store.latest("gone-1")!!.status shouldBe "DRAINED"
        val onlyPlan = graph("bad-pipeline", Doc) { start(node("plan") { set(Doc.log, listOf("plan")) }) }

        val error = shouldThrow<CheckpointFormatException> { onlyPlan.resume("gone-1", options(store)) }
        error.message shouldContain "node 'publish'"
        error.message shouldContain "graph 'bad-pipeline'"
        error.message shouldContain "state schema 'bad-doc' version 1"
        error.message shouldContain "checkpoint ${store.latest("gone-1")!!.sequence} of run 'gone-1'"
        // a fork and a snapshot of that checkpoint are refused the same way
        shouldThrow<CheckpointFormatException> {
            onlyPlan.fork("gone-1", store.latest("gone-1")!!.sequence, options(store, "gone-1-fork"))
        }
            .message shouldContain "node 'publish'"
        val snapshot = twoSteps.takeSnapshot(store, "gone-1").toJson()
        shouldThrow<CheckpointFormatException> { onlyPlan.loadSnapshot(snapshot) }.message shouldContain
            "node 'publish'"
        // the graph that wrote it still resumes it
        twoSteps.resume("gone-1", options(store)).state[Doc.log] shouldContainExactly listOf("plan", "publish")
    }

    @Test
    fun `a checkpoint whose interrupts or triggers name a removed node fails with CheckpointFormatException`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        pipeline.invoke(options = options(store, "gone-2")).status shouldBe Status.INTERRUPTED
        val onlyPlan = graph("bad-pipeline", Doc) { start(node("plan") { set(Doc.log, listOf("plan")) }) }
        shouldThrow<CheckpointFormatException> { onlyPlan.resume("gone-2", options(store), mapOf("plan" to "x")) }
            .message shouldContain "node 'approve'"

        // A hand-written snapshot whose only mention of the node is a pending trigger.
        val json = pipeline.takeSnapshot(store, "gone-2").toJson()
        val trigger = json.replace("\"nodes\":{", "\"triggers\":[{\"node\":\"publish\",\"stamp\":0}],\"nodes\":{")
        trigger shouldContain "\"triggers\":[{\"node\":\"publish\""
        withoutPublish.loadSnapshot(json).state[Doc.log] shouldContainExactly listOf("plan")
        shouldThrow<CheckpointFormatException> { withoutPublish.loadSnapshot(trigger) }.message shouldContain
            "node 'publish'"
    }

    @Test
    fun `loadSnapshot tells text that is not JSON from JSON that is not an envelope`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        pipeline.invoke(options = options(store, "snap-1"))
        val json = pipeline.takeSnapshot(store, "snap-1").toJson()
        pipeline.loadSnapshot(json).runId shouldBe "snap-1"

        for (text in listOf(json.dropLast(20), "hello", "", "{\"scope\": \"trellis.run\", garbage")) {
            val error = shouldThrow<CheckpointFormatException> { pipeline.loadSnapshot(text) }
            error.message shouldContain "The snapshot is corrupt: it is not valid JSON"
        }
        for (text in listOf("""{"a":1}""", "[1,2]", "42", """{"scope":"trellis.run","schemaVersion":1}""")) {
            val error = shouldThrow<CheckpointFormatException> { pipeline.loadSnapshot(text) }
            error.message shouldContain "The snapshot is corrupt: it is not a Trellis snapshot envelope"
            error.message shouldNotContain "valid JSON"
        }
    }
}
