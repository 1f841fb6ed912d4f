package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test

/**
 * A run of its own without checkpoints leaves its scheduler position to the next run of its graph (`GraphRuntime`):
 * whatever state a run ends in — failed with nodes still holding triggers, interrupted with nodes ready, completed
 * after a loop — the next run starts as if from a new position, and the result of an earlier run does not change
 * when a later run reuses its position.
 */
class PositionReuseTest {
    object S : StateSchema("position-reuse") {
        val n = key("n", default = 0)
        val fail = key("fail", default = false)
        val stop = key("stop", default = false)
    }

    /** entry -> a, b; a -> c; b -> c; c loops to itself until n reaches 3. `a` fails or interrupts on request. */
    private val g: Graph = graph("reuse", S) {
        val entry = node("entry") { }
        val a = node("a") {
            if (state[S.fail]) error("a failed")
            if (state[S.stop]) interrupt("stop")
        }
        val b = node("b") { }
        val c = node("c") { update(S.n) { it + 1 } }
        start(entry)
        entry then a
        entry then b
        a then c
        b then c
        c.route(c, END) { if (it[S.n] < 3) c else END }
    }

    /** The result of a run of [g]; a failed run's too (`invoke` throws it in a [GraphRunException]). */
    private fun run(fail: Boolean = false, stop: Boolean = false): RunResult = runBlocking {
        try {
            g.invoke(S.initialState().with(S.fail, fail).with(S.stop, stop))
        } catch (e: GraphRunException) {
            e.result
        }
    }

    private fun counts(result: RunResult): Map<String, Int> = result.nodes.mapValues { it.value.executions }

    private fun statuses(result: RunResult): Map<String, Status> = result.nodes.mapValues { it.value.status }

    @Test
    fun `every run starts from a fresh position, whatever the previous run left in its`() {
        val clean = run()
        clean.status shouldBe Status.COMPLETED
        clean.state[S.n] shouldBe 3
        val cleanCounts = counts(clean)
        cleanCounts["entry"] shouldBe 1
        counts(run()) shouldBe cleanCounts

        val failed = run(fail = true)
        failed.status shouldBe Status.FAILED
        val afterFailure = run()
        afterFailure.status shouldBe Status.COMPLETED
        afterFailure.state[S.n] shouldBe 3
        counts(afterFailure) shouldBe cleanCounts
        statuses(afterFailure).values.toSet() shouldBe setOf(Status.COMPLETED)

        val interrupted = run(stop = true)
        interrupted.status shouldBe Status.INTERRUPTED
        val afterInterrupt = run()
        afterInterrupt.status shouldBe Status.COMPLETED
        counts(afterInterrupt) shouldBe cleanCounts

        // Read only now, after later runs of the graph: a result keeps its own counts.
        counts(failed)["c"] shouldBe 0
        counts(failed)["a"] shouldBe 1
        counts(interrupted)["c"] shouldBe 0
        counts(clean) shouldBe cleanCounts
    }
}
