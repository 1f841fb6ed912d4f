@file:OptIn(ExperimentalCoroutinesApi::class)

package dev.trellis.runtime

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.maps.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/** The shapes of `docs/semantics.md` §5, each run end to end. */
class ScenarioTest {
    object S : StateSchema("scenario") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val i = key("i", default = 0)
    }

    private fun RunResult.executionsOf(): Map<String, Int> = nodes.mapValues { it.value.executions }

    @Test
    fun `chain runs in order, each node once`() = runTest {
        val chain = graph("chain", S) {
            val a = node("a") {
                delay(3)
                set(S.log, listOf("a"))
            }
            val b = node("b") {
                delay(1)
                set(S.log, listOf("b"))
            }
            val c = node("c") {
                delay(2)
                set(S.log, listOf("c"))
            }
            start(a)
            a then b
            b then c
        }
        val run = chain.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.state[S.log] shouldBe listOf("a", "b", "c")
        run.result.executionsOf() shouldContainExactly mapOf("a" to 1, "b" to 1, "c" to 1)
        run.all<RunEvent.NodeStarted>().map { it.nodeId } shouldBe listOf("a", "b", "c")
        currentTime shouldBe 6
    }

    @Test
    fun `diamond join runs once, after both branches`() = runTest {
        val starts = ConcurrentHashMap<String, Long>()
        val diamond = graph("diamond", S) {
            val s = node("s") {
                starts["s"] = currentTime
                delay(1)
                set(S.log, listOf("s"))
            }
            val a = node("a") {
                starts["a"] = currentTime
                delay(5)
                set(S.log, listOf("a"))
            }
            val b = node("b") {
                starts["b"] = currentTime
                delay(1)
                set(S.log, listOf("b"))
            }
            val j =
                node("j") {
                    starts["j"] = currentTime
                    set(S.log, listOf("j:" + get(S.log).sorted().joinToString()))
                }
            start(s)
            s then a
            s then b
            a then j
            b then j
        }
        val run = diamond.record(options = virtualTime())
        run.result.executionsOf() shouldContainExactly mapOf("s" to 1, "a" to 1, "b" to 1, "j" to 1)
        starts["a"] shouldBe 1
        starts["b"] shouldBe 1
        starts["j"] shouldBe 6
        run.result.state[S.log] shouldBe listOf("s", "b", "a", "j:a, b, s")
    }

    @Test
    fun `fan-out of 64 overlaps on real threads and joins once`(): Unit = runBlocking {
        val width = 64
        val arrived = AtomicInteger()
        val allRunning = CompletableDeferred<Unit>()
        val fan = graph("fan", S) {
            val s = node("s") { }
            val j = node("j") { set(S.log, listOf("j")) }
            start(s)
            for (k in 0 until width) {
                val branch = node("b$k") {
                    if (arrived.incrementAndGet() == width) allRunning.complete(Unit)
                    // Suspends until every branch is running at once; fails instead of hanging.
                    withTimeout(20.seconds) { allRunning.await() }
                    set(S.log, listOf("b$k"))
                }
                s then branch
                branch then j
            }
        }
        val run = fan.record(options = RunOptions(dispatcher = Dispatchers.Default))
        run.result.status shouldBe Status.COMPLETED
        run.result.node("j").executions shouldBe 1
        run.result.state[S.log].dropLast(1) shouldContainExactlyInAnyOrder (0 until width).map { "b$it" }
        run.result.state[S.log].last() shouldBe "j"
    }

    @Test
    fun `a branch not taken does not block the join`() = runTest {
        val g = graph("skip", S) {
            val s = node("s") { delay(1) }
            val a = node("a") { delay(1) }
            val b = node("b") { delay(4) }
            val j = node("j") { set(S.log, listOf("j")) }
            start(s)
            s.then(a) { false }
            s then b
            a then j
            b then j
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.node("a").status shouldBe Status.PENDING
        run.result.executionsOf() shouldContainExactly mapOf("s" to 1, "a" to 0, "b" to 1, "j" to 1)
        currentTime shouldBe 5
    }

    @Test
    fun `route loop runs N iterations`() = runTest {
        val loop = graph("loop", S) {
            val inc = node("inc") {
                delay(2)
                update(S.i) { it + 1 }
            }
            val done = node("done") { set(S.log, listOf("done at ${get(S.i)}")) }
            start(inc)
            inc.route(inc, done) { if (it[S.i] < 7) inc else done }
        }
        val run = loop.record(options = virtualTime())
        run.result.node("inc").executions shouldBe 7
        run.result.state[S.log] shouldBe listOf("done at 7")
        run.all<RunEvent.EdgeTaken>().count { it.to == "inc" } shouldBe 6
        currentTime shouldBe 14
    }

    @Test
    fun `a loop containing a diamond runs its join once per iteration`() = runTest {
        val g = graph("loop-diamond", S) {
            val s = node("s") { }
            val plan = node("plan") { delay(1) }
            val a = node("a") {
                delay(5)
                set(S.log, listOf("a"))
            }
            val b = node("b") {
                delay(2)
                set(S.log, listOf("b"))
            }
            val merge = node("merge") { set(S.log, listOf("merge")) }
            val check = node("check") { update(S.i) { it + 1 } }
            start(s)
            s then plan
            plan then a
            plan then b
            a then merge
            b then merge
            merge then check
            check.route(plan, END) { if (it[S.i] < 3) plan else END }
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.executionsOf() shouldContainExactly
            mapOf("s" to 1, "plan" to 3, "a" to 3, "b" to 3, "merge" to 3, "check" to 3)
        // Each iteration: both branches in parallel (b, the faster, first), then the join.
        run.result.state[S.log] shouldBe List(3) { listOf("b", "a", "merge") }.flatten()
        // plan 1 + max(a 5, b 2) per iteration: the branches overlap (sequential branches would take 24).
        currentTime shouldBe 18
    }

    @Test
    fun `a join inside a loop with an input from outside runs once per iteration`() = runTest {
        // refmodel.py's case: B feeds J once from outside the loop A -> J -> C -> A.
        val g = graph("loop-join", S) {
            val s = node("s") { delay(1) }
            val a = node("A") { delay(1) }
            val b = node("B") { delay(7) }
            val c = node("C") {
                delay(1)
                update(S.i) { it + 1 }
            }
            val j = node("J") {
                delay(1)
                set(S.log, listOf("J"))
            }
            start(s)
            s then a
            s then b
            a then j
            b then j
            j then c
            c.route(a, END) { if (it[S.i] < 4) a else END }
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.executionsOf() shouldContainExactly mapOf("s" to 1, "A" to 4, "B" to 1, "C" to 4, "J" to 4)
    }

    @Test
    fun `an independent branch never waits for a slow one`() = runTest {
        val starts = ConcurrentHashMap<String, Long>()
        val g = graph("eager", S) {
            val s = node("s") { delay(1) }
            val slow = node("slow") { delay(100) }
            val x = node("x") { starts["x"] = currentTime }
            val fast = node("fast") { delay(1) }
            val y = node("y") { starts["y"] = currentTime }
            start(s)
            s then slow
            slow then x
            s then fast
            fast then y
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        starts["y"] shouldBe 2
        starts["x"] shouldBe 101
        run.all<RunEvent.NodeCompleted>().map { it.nodeId } shouldBe listOf("s", "fast", "y", "slow", "x")
    }

    @Test
    fun `edges of one node to the same target leave one token, however many edges it takes`() {
        // Plain edges to every target, a route and two conditional edges to some of them again: with 4 targets the
        // scheduler finds the repeated targets by scanning the edges taken (7), with 12 by its marks (15 edges);
        // each target must still run once, and the join once.
        for (width in listOf(4, 12)) {
            val fan = graph("many-edges-$width", S) {
                val join = node("join") { set(S.log, listOf("join")) }
                val hub = node("hub") { }
                val targets = (0 until width).map { k -> node("t$k") { set(S.log, listOf("t$k")) } }
                start(hub)
                for (t in targets) {
                    hub then t
                    t then join
                }
                hub.route(targets[1], targets[2]) { targets[1] }
                hub.then(targets[2]) { true }
                hub.then(targets[width - 1]) { true }
            }
            val result = runBlocking { fan.invoke(fan.schema.initialState()) }
            result.executionsOf() shouldContainExactly
                (listOf("hub", "join") + (0 until width).map { "t$it" }).associateWith { 1 }
            result.state[S.log].toSet() shouldBe ((0 until width).map { "t$it" } + "join").toSet()
        }
    }
}
