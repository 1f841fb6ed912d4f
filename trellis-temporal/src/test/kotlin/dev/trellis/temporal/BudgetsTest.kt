package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Budget
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.io.IOException
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * A run's budget keeps its meaning on Temporal (`docs/semantics.md` §13.4, `docs/temporal.md`, "Budgets"): meters
 * charged in activities, node executions and time spent in workflow time, across continue-as-new too — the same
 * status, error, totals and counts as the local run.
 */
class BudgetsTest {
    object S : StateSchema("budgets") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val n = key("n", default = 0)
    }

    private val metered: Graph = graph("metered", S) {
        val a = node("a") {
            charge("usd", 0.3)
            set(S.log, listOf("a"))
        }
        val b = node("b") {
            charge("usd", 0.3)
            charge("tokens", 1200.0)
            set(S.log, listOf("b"))
        }
        val c = node("c") {
            charge("usd", 0.1)
            set(S.log, listOf("c"))
        }
        start(a)
        a then b
        b then c
    }

    private val loop: Graph = graph("budget-loop", S) {
        val step = node("step") { set(S.n, get(S.n) + 1) }
        start(step)
        step.route(step, END) { if (it[S.n] < 25) step else END }
    }

    /** A node whose first attempt fails and is retried after 30 s: time spent, in workflow time. */
    private val slow: Graph = graph("budget-slow", S) {
        val first = node("first", retry = Retry.fixed(2, 30.seconds)) {
            if (attempt == 1) throw IOException("not yet")
            set(S.log, listOf("first"))
        }
        val second = node("second") { set(S.log, listOf("second")) }
        start(first)
        first then second
    }

    /** Failed attempts that charged before failing, a node that fails for good after charging: all charges count. */
    private val paidFailures: Graph = graph("paid-failures", S) {
        val flaky = node("flaky", retry = Retry.fixed(3, 10.milliseconds)) {
            charge("usd", 0.25)
            if (attempt < 3) throw IOException("attempt $attempt failed")
            set(S.log, listOf("flaky"))
        }
        val broken = node("broken") {
            charge("usd", 0.5)
            throw IllegalStateException("broken")
        }
        val handler = node("handler") { set(S.log, listOf("handled")) }
        start(flaky)
        flaky then broken
        broken.onFailure(handler)
    }

    private fun local(graph: Graph, budget: Budget): RunResult {
        var out: RunResult? = null
        runTest {
            out = try {
                graph.invoke(graph.schema.initialState(), RunOptions(budget = budget))
            } catch (e: GraphRunException) {
                e.result
            }
        }
        return out!!
    }

    private fun assertSame(h: TemporalHarness, graph: Graph, budget: Budget, runId: String): TemporalRunResult {
        val expected = local(graph, budget)
        val actual = h.runner.start(graph, runId = runId, budget = budget).awaitBlocking()
        withClue("$runId: Temporal's error ${actual.error}, local ${expected.error?.message}") {
            actual.status shouldBe expected.status
            actual.state.toMap() shouldBe expected.state.toMap()
            actual.meters shouldBe expected.meters
            actual.nodes.mapValues { Triple(it.value.status, it.value.executions, it.value.attempts) } shouldBe
                expected.nodes.mapValues { Triple(it.value.status, it.value.executions, it.value.attempts) }
        }
        return actual
    }

    @Test
    fun `meters, node executions and time spent end a run as locally`() {
        TemporalHarness(listOf(metered, loop, slow, paidFailures)).use { h ->
            val within = assertSame(h, metered, Budget().withMeter("usd", 1.0), "within")
            within.status shouldBe Status.COMPLETED
            within.meters shouldBe mapOf("usd" to 0.7, "tokens" to 1200.0)

            val over = assertSame(h, metered, Budget().withMeter("usd", 0.5), "over")
            over.status shouldBe Status.FAILED
            over.error!! shouldContain "usd"
            over.error!! shouldContain "'b'"
            over.state[S.log] shouldBe listOf("a", "b") // the crossing execution completes; c does not start

            val counted = assertSame(h, loop, Budget().withMaxNodeExecutions(4), "counted")
            counted.error!! shouldContain "maxNodeExecutions"
            counted.state[S.n] shouldBe 4

            val timed = assertSame(h, slow, Budget().withMaxWallTime(10.seconds), "timed")
            timed.error!! shouldContain "maxWallTime"
            timed.state[S.log] shouldBe listOf("first")
            assertSame(h, slow, Budget().withMaxWallTime(60.seconds), "in-time").status shouldBe Status.COMPLETED

            val paid = assertSame(h, paidFailures, Budget().withMeter("usd", 2.0), "paid")
            paid.meters shouldBe mapOf("usd" to 1.25) // three attempts of flaky, the failed broken
            val overPaid = assertSame(h, paidFailures, Budget().withMeter("usd", 1.0), "over-paid")
            overPaid.error!! shouldContain "'broken'"
        }
    }

    @Test
    fun `an attempt that asks for input counts its charges, and so does its answered run`() {
        val asking = graph("asking", S) {
            val approve = node("approve") {
                charge("usd", 1.0)
                set(S.log, listOf(interrupt("Publish?")))
            }
            start(approve)
        }
        TemporalHarness(listOf(asking)).use { h ->
            val run = h.runner.start(asking, runId = "asking", budget = Budget().withMeter("usd", 5.0))
            val deadline = System.nanoTime() + 60_000_000_000L
            while (run.interrupts().isEmpty() && System.nanoTime() < deadline) Thread.sleep(20)
            run.answerBlocking("approve", "yes")
            val result = run.awaitBlocking()
            result.state[S.log] shouldBe listOf("yes")
            // As a local run resumed with the answer: the interrupted execution's charge and the answered one's.
            result.meters shouldBe mapOf("usd" to 2.0)
        }
    }

    @Test
    fun `a budget holds across continue-as-new`() {
        TemporalHarness(listOf(loop), TemporalOptions(continueAsNewAfterEvents = 20)).use { h ->
            val result = assertSame(h, loop, Budget().withMaxNodeExecutions(15), "segmented")
            result.error!! shouldContain "maxNodeExecutions"
            result.state[S.n] shouldBe 15
            // It did continue as new: its last workflow execution continues an earlier one.
            val started = h.env.workflowClient.fetchHistory("segmented").events.first()
            started.workflowExecutionStartedEventAttributes.continuedExecutionRunId.isEmpty() shouldBe false
            h.executions("step") shouldBe 15
        }
    }
}
