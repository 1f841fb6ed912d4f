package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.stateAt
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * The interrupt → resume and drain → resume flows with the real SQL stores (SQLite on a temporary file,
 * PostgreSQL in a fresh schema); each resume opens a new store on the same database, as a new process would.
 */
class SqlCheckpointRunTest {
    object Doc : StateSchema("sql-doc") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val drafts = key("drafts", default = 0)
        val approved = key<String?>("approved", default = null)
    }

    private val runs = ConcurrentHashMap<String, AtomicInteger>()

    private fun count(node: String) = runs.computeIfAbsent(node) { AtomicInteger() }.incrementAndGet()

    private fun runsOf(node: String) = runs[node]?.get() ?: 0

    private val pipeline = graph("sql-pipeline", Doc) {
        val plan = node("plan") { count("plan"); set(Doc.log, listOf("plan")) }
        val write = node("write") { count("write"); update(Doc.drafts) { it + 1 }; set(Doc.log, listOf("write")) }
        val approve = node("approve") {
            count("approve")
            val answer = interrupt("publish draft ${get(Doc.drafts)}?")
            set(Doc.approved, answer)
        }
        val publish = node("publish") { count("publish"); set(Doc.log, listOf("publish")) }
        start(plan)
        plan then write
        write.route(write, approve) { if (it[Doc.drafts] < 3) write else approve }
        approve then publish
    }

    private fun options(store: CheckpointStore, runId: String? = null, control: RunControl? = null) =
        RunOptions(runId = runId, checkpointing = Checkpointing(store, fullSnapshotEvery = 3), control = control)

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `interrupt then resume in another store instance`(backend: Backend): Unit = runBlocking {
        SqlDatabase(backend).use { db ->
            val first = db.store()
            val paused = withTimeout(30_000) { pipeline.invoke(options = options(first, "approval-1")) }
            paused.status shouldBe Status.INTERRUPTED
            paused.interrupts.single().payload shouldBe "publish draft 3?"
            val stored = first.history("approval-1")
            stored.last().status shouldBe "INTERRUPTED"
            stored.last().kind shouldBe CheckpointRecord.Kind.FULL
            stored.map { it.kind }.toSet() shouldBe setOf(CheckpointRecord.Kind.FULL, CheckpointRecord.Kind.DELTA)
            first.close()

            val second = db.store()
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
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `drain lets running nodes finish, then the run resumes in another store instance`(backend: Backend): Unit = runBlocking {
        SqlDatabase(backend).use { db ->
            val control = RunControl()
            val rightStarted = CompletableDeferred<Unit>()
            val drainCalled = CompletableDeferred<Unit>()
            val g = graph("sql-drain", Doc) {
                val split = node("split") { count("split"); set(Doc.log, listOf("split")) }
                val left = node("left") {
                    count("left")
                    // drain only once "right" runs (else "right" is merely ready and does not start)
                    rightStarted.await()
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
                val join = node("join") { count("join"); set(Doc.log, listOf("join")) }
                val last = node("last") { count("last"); set(Doc.log, listOf("last")) }
                start(split)
                split then left
                split then right
                left then join
                right then join
                join then last
            }
            val first = db.store()
            val drained = withTimeout(30_000) { g.invoke(options = options(first, "drain-1", control)) }
            drained.status shouldBe Status.INTERRUPTED
            drained.interrupts shouldBe emptyList()
            drained.node("join").status shouldBe Status.PENDING
            drained.state[Doc.log] shouldContainExactlyInAnyOrder listOf("split", "left", "right")
            control.activeRuns shouldBe 0
            first.history("drain-1").last().status shouldBe "DRAINED"
            first.close()

            val second = db.store()
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
    }
}
