package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Status
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicInteger

/**
 * A map node with a body per task runs each task as an activity (docs/temporal.md, "Maps"): at most
 * `maxConcurrency` at once, and never more pending activities than `TemporalOptions.maxPendingActivities`; the
 * writes fold in task order, as locally.
 */
class MapActivitiesTest {
    object M : StateSchema("maps") {
        val items = key("items", default = (1..6).toList())
        val doubled = key("doubled", default = emptyList<Int>(), reducer = Reducer.append())
    }

    private val running = AtomicInteger()
    private val most = AtomicInteger()

    private fun track() {
        val now = running.incrementAndGet()
        most.accumulateAndGet(now) { a, b -> maxOf(a, b) }
    }

    private fun mapped(id: String, maxConcurrency: Int): Graph = graph(id, M) {
        val double = map("double", over = M.items, maxConcurrency = maxConcurrency) { item: Int ->
            track()
            try {
                Thread.sleep(40) // on the activity worker's thread: overlapping tasks overlap here
            } finally {
                running.decrementAndGet()
            }
            set(M.doubled, listOf(item * 2))
        }
        start(double)
    }

    @Test
    fun `map tasks are activities bounded by maxConcurrency, folded in task order as locally`() {
        val graph = mapped("mapped", maxConcurrency = 2)
        val expected = TemporalHarness.local(graph)
        most.set(0)
        TemporalHarness(listOf(graph)).use { temporal ->
            val result = temporal.runner.start(graph, runId = "mapped-1").awaitBlocking()

            result.status shouldBe expected.status
            result.state[M.doubled] shouldBe expected.state[M.doubled]
            result.state[M.doubled] shouldBe listOf(2, 4, 6, 8, 10, 12)
            result.node("double").executions shouldBe 1
            (0..5).map { temporal.executions("double[$it]") } shouldBe List(6) { 1 }
            most.get() shouldBeLessThanOrEqual 2
        }
    }

    @Test
    fun `a wide map waits for activity slots below Temporal's pending limit`() {
        val graph = mapped("wide", maxConcurrency = Int.MAX_VALUE)
        TemporalHarness(listOf(graph), TemporalOptions(maxPendingActivities = 3)).use { temporal ->
            most.set(0)
            val input = stateOf(M.items to (1..24).toList())
            val result = temporal.runner.start(graph, input, "wide-1").awaitBlocking()

            result.status shouldBe Status.COMPLETED
            result.state[M.doubled] shouldBe (1..24).map { it * 2 }
            most.get() shouldBeLessThanOrEqual 3
            most.get() shouldBeGreaterThan 0
        }
    }
}
