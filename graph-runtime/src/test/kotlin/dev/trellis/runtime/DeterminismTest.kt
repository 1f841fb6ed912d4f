package dev.trellis.runtime

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import kotlin.random.Random

/** Named cases of `docs/semantics.md` §5: execution counts that must not depend on durations. */
class DeterminismTest {
    object Plans : StateSchema("plans") {
        val plans = key("plans", default = 0)
    }

    /** The repro of the determinism issue: a node fed from inside a loop, with the three nodes' durations in ms. */
    private fun planNotifyAct(dP: Long, dN: Long, dA: Long) = graph("plan-notify-act", Plans) {
        val p = node("plan") {
            delay(dP)
            update(Plans.plans) { it + 1 }
        }
        val n = node("notify") { delay(dN) }
        val a = node("act") { delay(dA) }
        start(p)
        p then n
        p.then(a) { it[Plans.plans] < 3 }
        a then p
    }

    private fun countsOf(result: RunResult) = listOf("plan", "notify", "act").map { result.node(it).executions }

    @Test
    fun `notify runs once per plan whatever the durations`() = runTest {
        val random = Random(13)
        val timings = listOf(Triple(9L, 2L, 7L), Triple(2L, 6L, 1L), Triple(1L, 50L, 1L), Triple(5L, 5L, 5L)) +
            List(40) { Triple(random.nextLong(1, 20), random.nextLong(1, 20), random.nextLong(1, 20)) }
        for ((dP, dN, dA) in timings) {
            val run = planNotifyAct(dP, dN, dA).record(options = virtualTime())
            run.result.status shouldBe Status.COMPLETED
            countsOf(run.result) shouldBe listOf(3, 3, 2)
        }
    }

    @Test
    fun `notify runs once per plan on real threads`() = runBlocking {
        repeat(20) {
            val result = planNotifyAct(
                0,
                1,
                0,
            ).invoke(Plans.initialState(), RunOptions(dispatcher = Dispatchers.Default))
            countsOf(result) shouldBe listOf(3, 3, 2)
        }
    }

    @Test
    fun `a join after a branch that loops runs once, when the loop takes its exit edge`() = runTest {
        for ((dX, dI) in listOf(1L to 5L, 30L to 1L, 4L to 4L)) {
            val g = graph("join-after-loop", Plans) {
                val h = node("h") { }
                val x = node("x") { delay(dX) }
                val i = node("i") {
                    delay(dI)
                    update(Plans.plans) { it + 1 }
                }
                val j = node("j") { }
                start(h)
                h then x
                h then i
                i.then(i) { it[Plans.plans] < 3 }
                i.then(j) { it[Plans.plans] >= 3 }
                x then j
            }
            val result = g.record(options = virtualTime()).result
            listOf("x", "i", "j").map { result.node(it).executions } shouldBe listOf(1, 3, 1)
        }
    }

    @Test
    fun `an edge taken on every iteration of a loop runs its target once per token`() = runTest {
        for (dJ in listOf(1L, 20L)) {
            val g = graph("per-iteration", Plans) {
                val i = node("i") {
                    delay(2)
                    update(Plans.plans) { it + 1 }
                }
                val j = node("j") { delay(dJ) }
                start(i)
                i.then(i) { it[Plans.plans] < 4 }
                i then j
            }
            val result = g.record(options = virtualTime()).result
            listOf("i", "j").map { result.node(it).executions } shouldBe listOf(4, 4)
        }
    }

    @Test
    fun `the parallel branches of a diamond inside a loop start together in every iteration`() = runTest {
        val g = graph("loop-diamond", Plans) {
            val plan = node("plan") { }
            val a = node("a") { delay(3) }
            val b = node("b") { delay(3) }
            val merge = node("merge") { }
            val check = node("check") { update(Plans.plans) { it + 1 } }
            start(plan)
            plan then a
            plan then b
            a then merge
            b then merge
            merge then check
            check.route(plan, END) { if (it[Plans.plans] < 3) plan else END }
        }
        val run = g.record(options = virtualTime())
        listOf("a", "b", "merge").map { run.result.node(it).executions } shouldBe listOf(3, 3, 3)
        // In every iteration a and b start before either of them completes.
        val order = run.events.mapNotNull {
            when (it) {
                is RunEvent.NodeStarted -> "+${it.nodeId}"
                is RunEvent.NodeCompleted -> "-${it.nodeId}"
                else -> null
            }
        }.filter { it.endsWith("a") || it.endsWith("b") }
        order shouldBe List(3) { listOf("+a", "+b", "-a", "-b") }.flatten()
    }
}
