package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.Interrupt
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.fork
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.stateAt
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * Nested checkpoints of subgraph and map nodes (`docs/persistence.md`), for every store: a run stopped inside a child
 * run or in the middle of a map resumes without running completed child nodes or tasks again; interrupts inside
 * children reach the parent and back; a fork from a checkpoint taken inside a child runs only what follows it.
 * [newStore] called again stands for another process on the same database.
 */
abstract class CompositionPersistenceContract {
    protected abstract fun newStore(): CheckpointStore

    protected open fun cleanUp() {}

    @AfterEach
    fun tearDown() {
        cleanUp()
    }

    object Plan : StateSchema("nested-plan") {
        val questions = key("questions", default = emptyList<String>())
        val findings = key("findings", default = emptyList<String>(), reducer = Reducer.append())
        val approved = key("approved", default = "")
    }

    object Research : StateSchema("nested-research") {
        val question = key("question", default = "")
        val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
        val verdict = key("verdict", default = "")
    }

    private val runs = ConcurrentHashMap<String, AtomicInteger>()

    private fun count(what: String) = runs.computeIfAbsent(what) { AtomicInteger() }.incrementAndGet()

    private fun runsOf(what: String) = runs[what]?.get() ?: 0

    /** Set by a test to hold node `wait` of the child run until the run is cancelled ("the process dies"). */
    @Volatile
    private var hold: CompletableDeferred<Unit>? = null

    /** first -> second -> wait -> last, each noting itself; `wait` can be held. */
    private val child = graph("nested-child", Research) {
        val first = node("first") {
            count("first:" + get(Research.question))
            set(Research.notes, listOf("first"))
        }
        val second = node("second") {
            count("second:" + get(Research.question))
            set(Research.notes, listOf("second"))
        }
        val wait = node("wait") {
            hold?.let {
                it.complete(Unit)
                awaitCancellation()
            }
            count("wait:" + get(Research.question))
        }
        val last = node("last") {
            count("last:" + get(Research.question))
            set(Research.verdict, get(Research.notes).joinToString("+"))
        }
        start(first)
        first then second
        second then wait
        wait then last
    }

    private val approving = graph("nested-approval", Research) {
        val draft = node("draft") {
            count("draft:" + get(Research.question))
            set(Research.notes, listOf("draft"))
        }
        val approve = node("approve") {
            count("approve:" + get(Research.question))
            set(Research.verdict, interrupt("publish ${get(Research.question)}?"))
        }
        start(draft)
        draft then approve
    }

    private fun options(store: CheckpointStore, runId: String? = null) =
        RunOptions(runId = runId, checkpointing = Checkpointing(store, fullSnapshotEvery = 4))

    private fun subgraphParent(childGraph: Graph): Graph = graph("nested-parent", Plan) {
        val research = subgraph("research", childGraph) {
            input { set(Research.question, "q") }
            output { c -> set(Plan.findings, listOf(c[Research.verdict])) }
        }
        val after = node("after") { count("after") }
        start(research)
        research then after
    }

    @Test
    fun `a run stopped inside a child run resumes the child where it stopped`(): Unit = runBlocking {
        val parent = subgraphParent(child)
        val store = newStore()
        val held = CompletableDeferred<Unit>().also { hold = it }
        val running = async { parent.invoke(options = options(store, "stopped-in-child")) }
        withTimeout(30_000) { held.await() }
        running.cancelAndJoin()
        hold = null

        val result = parent.resume("stopped-in-child", options(newStore()))
        result.status shouldBe Status.COMPLETED
        result.state[Plan.findings] shouldContainExactly listOf("first+second")
        runsOf("first:q") shouldBe 1
        runsOf("second:q") shouldBe 1
        runsOf("wait:q") shouldBe 1
        runsOf("last:q") shouldBe 1
        runsOf("after") shouldBe 1
        result.child("research").node("first").executions shouldBe 1
    }

    @Test
    fun `an interrupt inside a child pauses the parent and the answer reaches it by path`(): Unit = runBlocking {
        val parent = subgraphParent(approving)
        val paused = parent.invoke(options = options(newStore(), "child-interrupt"))
        paused.status shouldBe Status.INTERRUPTED
        paused.interrupts shouldContainExactly listOf(Interrupt("approve", "publish q?", "research/approve"))

        val done = parent.resume("child-interrupt", options(newStore()), "yes")
        done.status shouldBe Status.COMPLETED
        done.state[Plan.findings] shouldContainExactly listOf("yes")
        runsOf("draft:q") shouldBe 1
        runsOf("approve:q") shouldBe 2
        runsOf("after") shouldBe 1
    }

    @Test
    fun `an interrupt in one map task keeps the completed tasks and resume runs only the rest`(): Unit = runBlocking {
        // Only the child of "b" asks: the others answer themselves.
        val asking = graph("nested-approval", Research) {
            val draft = node("draft") { count("draft:" + get(Research.question)) }
            val approve = node("approve") {
                count("approve:" + get(Research.question))
                val q = get(Research.question)
                set(Research.verdict, if (q == "b") interrupt("publish b?") else "auto")
            }
            start(draft)
            draft then approve
        }
        val withAsking = graph("nested-map-parent", Plan) {
            start(
                map("research", over = Plan.questions, graph = asking, maxConcurrency = 2) {
                    input { set(Research.question, item) }
                    output { c -> set(Plan.findings, listOf("${c[Research.question]}=${c[Research.verdict]}")) }
                },
            )
        }
        val input = stateOf(Plan.questions to listOf("a", "b", "c", "d"))
        val paused = withAsking.invoke(input, options(newStore(), "map-interrupt"))
        paused.status shouldBe Status.INTERRUPTED
        paused.interrupts shouldContainExactly listOf(Interrupt("approve", "publish b?", "research[1]/approve"))

        val done = withAsking.resume("map-interrupt", options(newStore()), "yes")
        done.status shouldBe Status.COMPLETED
        done.state[Plan.findings] shouldContainExactly listOf("a=auto", "b=yes", "c=auto", "d=auto")
        for (q in listOf("a", "c", "d")) runsOf("approve:$q") shouldBe 1
        runsOf("draft:b") shouldBe 1
        runsOf("approve:b") shouldBe 2
    }

    @Test
    fun `a map stopped after 7 of 10 tasks resumes only the 3 that had not finished`(): Unit = runBlocking {
        val gate = CompletableDeferred<Unit>()
        val parent = graph("nested-map-crash", Plan) {
            val work = map("work", over = Plan.questions) { q ->
                count("task:$q")
                if (q.removePrefix("t").toInt() >= 7) {
                    count("held")
                    gate.await()
                }
                set(Plan.findings, listOf(q))
            }
            start(work)
        }
        val input = stateOf(Plan.questions to (0 until 10).map { "t$it" })
        val store = newStore()
        val running = async { parent.invoke(input, options(store, "map-crash")) }
        // 1 checkpoint at the start, 1 with the map's items, 1 per completed task.
        withTimeout(30_000) {
            while (runsOf("held") < 3 || store.history("map-crash").size < 9) kotlinx.coroutines.delay(5)
        }
        store.history("map-crash").size shouldBe 9
        running.cancelAndJoin()
        gate.complete(Unit)

        val result = parent.resume("map-crash", options(newStore()))
        result.status shouldBe Status.COMPLETED
        result.state[Plan.findings] shouldContainExactly (0 until 10).map { "t$it" }
        for (i in 0 until 7) runsOf("task:t$i") shouldBe 1
        for (i in 7 until 10) runsOf("task:t$i") shouldBe 2
    }

    @Test
    fun `a fork from a checkpoint taken inside a child re-runs only what follows it in the child`(): Unit = runBlocking {
        val parent = subgraphParent(child)
        val store = newStore()
        parent.invoke(options = options(store, "fork-source")).status shouldBe Status.COMPLETED
        runs.clear()
        // The checkpoint saved when the child's "second" completed: the child has first and second behind it.
        val history = parent.checkpoints(store, "fork-source")
        val afterSecond = history.first { info ->
            val seq = info.sequence
            runCatching { parent.stateAt(store, "fork-source", seq) }.isSuccess &&
                childNotes(store, "fork-source", seq) == listOf("first", "second")
        }
        val fork = parent.fork("fork-source", afterSecond.sequence, options(store, "fork-target"))
        fork.status shouldBe Status.COMPLETED
        fork.state[Plan.findings] shouldContainExactly listOf("first+second")
        runsOf("first:q") shouldBe 0
        runsOf("second:q") shouldBe 0
        runsOf("wait:q") shouldBe 1
        runsOf("last:q") shouldBe 1
        runsOf("after") shouldBe 1
    }

    /** The notes of the child run in flight at checkpoint [sequence], read the way a resume reads them. */
    private suspend fun childNotes(store: CheckpointStore, runId: String, sequence: Long): List<String>? {
        val snapshot = subgraphParent(child).let { p ->
            dev.trellis.runtime.internal.checkpoint.loadRecord(p, store, runId, sequence, emptyList()).second
        }
        val entry = snapshot.children.values.singleOrNull() ?: return null
        val chain = entry.chain.map {
            dev.trellis.runtime.internal.checkpoint.PositionCodec.unwrap(child, it, "test")
        }
        val restored = dev.trellis.runtime.internal.checkpoint.PositionCodec.restore(child, chain, emptyList(), "test")
        return restored.state[Research.notes]
    }
}
