package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.SnapshotPreset
import dev.trellis.runtime.StateMigration
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.events
import dev.trellis.runtime.fork
import dev.trellis.runtime.invoke
import dev.trellis.runtime.loadSnapshot
import dev.trellis.runtime.resume
import dev.trellis.runtime.resumeEvents
import dev.trellis.runtime.stateAt
import dev.trellis.runtime.takeSnapshot
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * Run-level persistence every [CheckpointStore] must support: checkpoints after every step, interrupt → resume,
 * drain → resume, cancellation → resume, time travel, forks, snapshots, migrations and one writer per run. Each
 * store's test class extends this and says how to open a store on its (fresh) database; [newStore] called again
 * stands for another process on the same database, so a resume reads only what the first store persisted.
 */
abstract class RunPersistenceContract {
    /** A store on this test's database; each call is another "process" (the in-memory store returns itself). */
    protected abstract fun newStore(): CheckpointStore

    /** Closes the stores and removes whatever they created outside the JVM (files, schemas). */
    protected open fun cleanUp() {}

    @AfterEach
    fun tearDown() {
        cleanUp()
    }

    object Doc : StateSchema("doc") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val drafts = key("drafts", default = 0)
        val approved = key<String?>("approved", default = null)
    }

    object DocV2 : StateSchema("doc", version = 2) {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val drafts = key("drafts", default = 0)
        val approved = key<String?>("approved", default = null)
        val title = key("title", default = "")
    }

    object DocWithoutLog : StateSchema("doc") {
        val drafts = key("drafts", default = 0)
        val approved = key<String?>("approved", default = null)
    }

    private val runs = ConcurrentHashMap<String, AtomicInteger>()

    private fun count(node: String) = runs.computeIfAbsent(node) { AtomicInteger() }.incrementAndGet()

    private fun runsOf(node: String) = runs[node]?.get() ?: 0

    private val pipeline = graph("pipeline", Doc) {
        val plan = node("plan") {
            count("plan")
            set(Doc.log, listOf("plan"))
        }
        val write = node("write") {
            count("write")
            update(Doc.drafts) { it + 1 }
            set(Doc.log, listOf("write"))
        }
        val approve = node("approve") {
            count("approve")
            val answer = interrupt("publish draft ${get(Doc.drafts)}?")
            set(Doc.approved, answer)
        }
        val publish = node("publish") {
            count("publish")
            set(Doc.log, listOf("publish"))
        }
        start(plan)
        plan then write
        write.route(write, approve) { if (it[Doc.drafts] < 3) write else approve }
        approve then publish
    }

    private fun options(store: CheckpointStore, runId: String? = null, control: RunControl? = null) =
        RunOptions(runId = runId, checkpointing = Checkpointing(store, fullSnapshotEvery = 3), control = control)

    @Test
    fun `interrupt ends the run INTERRUPTED and a resume in another store instance continues with the answer`(): Unit = runBlocking {
        val first = newStore()
        val paused = withTimeout(30_000) { pipeline.invoke(options = options(first, "approval-1")) }
        paused.status shouldBe Status.INTERRUPTED
        paused.interrupts.single().nodeId shouldBe "approve"
        paused.interrupts.single().payload shouldBe "publish draft 3?"
        paused.node("publish").status shouldBe Status.PENDING
        val stored = first.history("approval-1")
        stored.last().status shouldBe "INTERRUPTED"
        stored.last().kind shouldBe CheckpointRecord.Kind.FULL
        stored.map { it.kind }.toSet() shouldBe setOf(CheckpointRecord.Kind.FULL, CheckpointRecord.Kind.DELTA)
        first.close()

        val second = newStore()
        pipeline.stateAt(second, "approval-1")[Doc.drafts] shouldBe 3
        val done = withTimeout(30_000) { pipeline.resume("approval-1", options(second), "ship it") }
        done.status shouldBe Status.COMPLETED
        done.state[Doc.approved] shouldBe "ship it"
        done.state[Doc.log] shouldContainExactly listOf("plan", "write", "write", "write", "publish")
        done.node("write").executions shouldBe 3
        done.node("approve").executions shouldBe 1 // the interrupted execution did not finish; the answered one did
        runsOf("plan") shouldBe 1
        runsOf("write") shouldBe 3
        runsOf("approve") shouldBe 2 // asked, then answered
        runsOf("publish") shouldBe 1

        val history = pipeline.checkpoints(second, "approval-1")
        history.map { it.sequence } shouldBe (1L..history.size).toList()
        history.last().status shouldBe "COMPLETED"
        history.count { it.status == "INTERRUPTED" } shouldBe 1
        pipeline.stateAt(second, "approval-1") shouldBe done.state
        second.runs().single { it.runId == "approval-1" }.latestStatus shouldBe "COMPLETED"
    }

    @Test
    fun `a checkpoint follows every step, with deltas between full snapshots`(): Unit = runBlocking {
        val store = newStore()
        val events = pipeline.events(options = options(store, "r2")).toList()
        val saved = events.filterIsInstance<RunEvent.CheckpointSaved>()
        val completions = events.count { it is RunEvent.NodeCompleted || it is RunEvent.NodeCancelled }
        saved.size shouldBe completions + 2 // start, one per completion, end
        (events.last() is RunEvent.RunInterrupted) shouldBe true
        val history = pipeline.checkpoints(store, "r2")
        history.map { it.sequence } shouldBe (1L..saved.size.toLong()).toList()
        history.first().full shouldBe true
        history.last().full shouldBe true
        history.count { !it.full } shouldBe saved.size - history.count { it.full }
        history.last().status shouldBe "INTERRUPTED"
        pipeline.stateAt(store, "r2", 1)[Doc.drafts] shouldBe 0
        pipeline.stateAt(store, "r2", 3)[Doc.drafts] shouldBe 1
        pipeline.stateAt(store, "r2")[Doc.log] shouldContainExactly listOf("plan", "write", "write", "write")
    }

    @Test
    fun `resume refuses an answer for a node without interrupt and a finished run`(): Unit = runBlocking {
        val store = newStore()
        pipeline.invoke(options = options(store, "r3"))
        shouldThrow<IllegalArgumentException> { pipeline.resume("r3", options(store), mapOf("plan" to "x")) }
            .message shouldContain "no pending interrupt"
        pipeline.resume("r3", options(store), "no")
        shouldThrow<IllegalStateException> { pipeline.resume("r3", options(store)) }.message shouldContain
            "already ended COMPLETED"
        // With an answer too: the run's state is what is wrong, not the answer.
        shouldThrow<IllegalStateException> { pipeline.resume("r3", options(store), "yes") }.message shouldContain
            "already ended COMPLETED"
        shouldThrow<IllegalStateException> { pipeline.resumeEvents("r3", options(store), "yes").toList() }
            .message shouldContain "already ended COMPLETED"
        shouldThrow<NoSuchElementException> { pipeline.resume("nope", options(store)) }.message shouldContain
            "no checkpoint of run 'nope'"
    }

    @Test
    fun `a cancelled run resumes from its last checkpoint without re-running completed nodes`(): Unit = runBlocking {
        val blocked = CompletableDeferred<Unit>()
        val slowRuns = AtomicInteger()
        val g = graph("crashy", Doc) {
            val a = node("a") {
                count("a")
                set(Doc.log, listOf("a"))
            }
            val slow = node("slow") {
                if (slowRuns.incrementAndGet() == 1) {
                    blocked.complete(Unit)
                    awaitCancellation()
                }
                set(Doc.log, listOf("slow"))
            }
            val b = node("b") {
                count("b")
                set(Doc.log, listOf("b"))
            }
            start(a)
            a then slow
            slow then b
        }
        val job = launch { g.invoke(options = options(newStore(), "crash")) }
        withTimeout(30_000) { blocked.await() }
        job.cancelAndJoin() // the process "dies" while slow runs
        val done = withTimeout(30_000) { g.resume("crash", options(newStore())) }
        done.status shouldBe Status.COMPLETED
        done.state[Doc.log] shouldContainExactly listOf("a", "slow", "b")
        runsOf("a") shouldBe 1
        slowRuns.get() shouldBe 2
    }

    @Test
    fun `drain lets running nodes finish, checkpoints, and the run resumes in another store instance`(): Unit = runBlocking {
        val control = RunControl()
        val rightStarted = CompletableDeferred<Unit>()
        val drainCalled = CompletableDeferred<Unit>()
        val g = graph("drain", Doc) {
            val split = node("split") {
                count("split")
                set(Doc.log, listOf("split"))
            }
            val left = node("left") {
                count("left")
                rightStarted.await() // drain only once "right" runs (else "right" is merely ready and does not start)
                control.drain()
                drainCalled.complete(Unit)
                set(Doc.log, listOf("left"))
            }
            val right = node("right") {
                count("right")
                rightStarted.complete(Unit)
                drainCalled.await() // still running when the drain starts: it finishes and is kept
                set(Doc.log, listOf("right"))
            }
            val join = node("join") {
                count("join")
                set(Doc.log, listOf("join"))
            }
            val last = node("last") {
                count("last")
                set(Doc.log, listOf("last"))
            }
            start(split)
            split then left
            split then right
            left then join
            right then join
            join then last
        }
        val first = newStore()
        val drained = withTimeout(30_000) { g.invoke(options = options(first, "drain-1", control)) }
        drained.status shouldBe Status.INTERRUPTED
        drained.interrupts shouldBe emptyList()
        drained.node("join").status shouldBe Status.PENDING
        drained.state[Doc.log] shouldContainExactlyInAnyOrder listOf("split", "left", "right")
        control.activeRuns shouldBe 0
        first.history("drain-1").last().status shouldBe "DRAINED"
        g.checkpoints(first, "drain-1").last().status shouldBe "DRAINED"
        first.close()

        val second = newStore()
        val done = withTimeout(30_000) { g.resume("drain-1", options(second)) }
        done.status shouldBe Status.COMPLETED
        done.state[Doc.log].take(3) shouldContainExactlyInAnyOrder listOf("split", "left", "right")
        done.state[Doc.log].drop(3) shouldContainExactly listOf("join", "last")
        listOf("split", "left", "right", "join", "last").forEach {
            runsOf(it) shouldBe 1
            done.node(it).executions shouldBe 1
        }
        val history = g.checkpoints(second, "drain-1")
        history.map { it.status }.filter { it != "RUNNING" } shouldBe listOf("DRAINED", "COMPLETED")
        g.stateAt(second, "drain-1") shouldBe done.state
    }

    @Test
    fun `fork from an earlier checkpoint with an edited state`(): Unit = runBlocking {
        val store = newStore()
        pipeline.invoke(options = options(store, "orig"))
        val afterPlan = pipeline.checkpoints(store, "orig")[1]
        pipeline.stateAt(store, "orig", afterPlan.sequence)[Doc.log] shouldContainExactly listOf("plan")
        val forked = pipeline.fork("orig", afterPlan.sequence, options(store, "fork")) { it.with(Doc.drafts, 2) }
        forked.status shouldBe Status.INTERRUPTED
        forked.state[Doc.drafts] shouldBe 3
        forked.state[Doc.log] shouldContainExactly listOf("plan", "write")
        pipeline.checkpoints(store, "fork").first().forkedFrom.toString() shouldBe "orig#${afterPlan.sequence}"
        pipeline.checkpoints(store, "orig").last().status shouldBe "INTERRUPTED"
    }

    @Test
    fun `one writer per run`(): Unit = runBlocking {
        val store = newStore()
        pipeline.invoke(options = options(store, "w1"))
        newStore().claim("w1", "someone-else")
        shouldThrow<RunOwnedException> { pipeline.resume("w1", options(store), "yes") }
    }

    @Test
    fun `snapshots round-trip and validate what they load`(): Unit = runBlocking {
        val store = newStore()
        pipeline.invoke(options = options(store, "s1"))
        val appData = buildJsonObject { put("user", "u-1") }
        val snapshot = pipeline.takeSnapshot(store, "s1", appData = appData)
        val json = snapshot.toJson()
        json shouldContain "\"scope\":\"trellis.run\""
        val loaded = pipeline.loadSnapshot(json)
        loaded.state shouldBe snapshot.state
        loaded.appData shouldBe appData
        loaded.preset shouldBe SnapshotPreset.RESUMABLE
        val resumed = pipeline.resume(loaded, RunOptions())
        resumed.status shouldBe Status.INTERRUPTED // approve asks again: the snapshot carries no answer
        resumed.node("write").executions shouldBe 3

        val stateOnly = pipeline.loadSnapshot(
            pipeline.takeSnapshot(store, "s1", preset = SnapshotPreset.STATE).toJson(),
        )
        stateOnly.preset shouldBe SnapshotPreset.STATE

        shouldThrow<CheckpointFormatException> { pipeline.loadSnapshot("{not json") }.message shouldContain "corrupt"
        shouldThrow<CheckpointFormatException> {
            pipeline.loadSnapshot(json.replace("trellis.run", "agent"))
        }.message shouldContain
            "scope 'agent'"
        shouldThrow<CheckpointFormatException> {
            pipeline.loadSnapshot(json.replace("\"schemaVersion\":1", "\"schemaVersion\":9"))
        }
            .message shouldContain "format 9"
        val other = graph("other", Doc) { start(node("x") {}) }
        shouldThrow<CheckpointFormatException> { other.loadSnapshot(json) }.message shouldContain
            "belongs to graph 'pipeline'"
    }

    @Test
    fun `schema evolution runs migrations or names the gap`(): Unit = runBlocking {
        val store = newStore()
        pipeline.invoke(options = options(store, "m1"))
        val json = pipeline.takeSnapshot(store, "m1").toJson()
        val v2 = graph("pipeline", DocV2) {
            val approve = node("approve") { set(DocV2.approved, interrupt("?")) }
            val publish = node("publish") { set(DocV2.log, listOf("publish")) }
            val plan = node("plan") {}
            val write = node("write") {}
            start(plan)
            plan then write
            write then approve
            approve then publish
        }
        shouldThrow<CheckpointFormatException> { v2.loadSnapshot(json) }.message shouldContain
            "no StateMigration from version 1 to 2"
        val migration = StateMigration(1, 2) { JsonObject(it + ("title" to JsonPrimitive("Sky"))) }
        v2.loadSnapshot(json, listOf(migration)).state[DocV2.title] shouldBe "Sky"
        val migrated = v2.resume(
            "m1",
            RunOptions(checkpointing = Checkpointing(store, migrations = listOf(migration))),
            "ok",
        )
        migrated.state[DocV2.title] shouldBe "Sky"
        migrated.state[DocV2.log] shouldContainExactly listOf("plan", "write", "write", "write", "publish")

        val shrunk = graph("pipeline", DocWithoutLog) { start(node("plan") {}) }
        shouldThrow<CheckpointFormatException> { shrunk.loadSnapshot(json) }.message shouldContain "state key 'log'"
    }

    @Test
    fun `concurrent runs of one graph with one store stay separate`(): Unit = runBlocking {
        val store = newStore()
        val results = (1..8).map {
            i ->
            async { pipeline.invoke(stateOf(Doc.drafts to i % 2), options(store, "c$i")) }
        }.map { it.await() }
        results.map { it.runId }.toSet().size shouldBe 8
        results.forEach { it.status shouldBe Status.INTERRUPTED }
        store.runs().size shouldBe 8
    }
}
