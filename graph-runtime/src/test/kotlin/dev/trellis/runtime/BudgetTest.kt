package dev.trellis.runtime

import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.maps.shouldBeEmpty
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.io.IOException
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** Budgets, `docs/semantics.md` §13.4. */
class BudgetTest {
    object S : StateSchema("budget") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val items = key("items", default = emptyList<String>())
        val n = key("n", default = 0)
    }

    /** a (2 usd) -> b (2 usd, writes) -> c (2 usd). */
    private val chain = graph("chain", S) {
        val a = node("a") {
            charge("usd", 2.0)
            set(S.log, listOf("a"))
        }
        val b = node("b") {
            charge("usd", 2.0)
            charge("tokens", 1200.0)
            set(S.log, listOf("b"))
        }
        val c = node("c") {
            charge("usd", 2.0)
            set(S.log, listOf("c"))
        }
        start(a)
        a then b
        b then c
    }

    private suspend fun record(g: dev.trellis.graph.Graph, options: RunOptions): List<RunEvent> {
        val events = g.events(options = options).toList()
        EventInvariants.check(events)
        return events
    }

    private fun resultOf(events: List<RunEvent>): RunResult = (events.last() as RunEvent.Terminal).result

    @Test
    fun `a meter over its limit stops the run naming the meter, its limit, the total and the node that crossed it`() =
        runTest {
            val events = record(chain, RunOptions(budget = Budget().withMeter("usd", 3.0)))
            val result = resultOf(events)
            result.status shouldBe Status.FAILED
            val error = result.error.shouldBeInstanceOf<LimitExceededException>()
            error.limit shouldBe "usd"
            error.meter shouldBe "usd"
            error.value shouldBe 3.0
            error.total shouldBe 4.0
            error.nodeId shouldBe "b"
            error.message shouldContain "meter 'usd' = 3.0 exceeded: node 'b' brought its total to 4.0"
            error.message shouldContain "Budget"
            // The crossing execution completed: its writes applied, its edge decided; nothing started after it.
            result.state[S.log] shouldBe listOf("a", "b")
            result.node("b").status shouldBe Status.COMPLETED
            result.node("c").status shouldBe Status.PENDING
            events.filterIsInstance<RunEvent.EdgeTaken>().map { it.from to it.to } shouldBe
                listOf("a" to "b", "b" to "c")
            result.meters shouldBe mapOf("usd" to 4.0, "tokens" to 1200.0)
            val charged = events.filterIsInstance<RunEvent.MetersCharged>()
            charged.map { it.nodeId } shouldBe listOf("a", "b")
            charged[1].charges shouldBe mapOf("usd" to 2.0, "tokens" to 1200.0)
            charged[1].totals shouldBe mapOf("usd" to 4.0, "tokens" to 1200.0)
            // Right before the execution's end event.
            val i = events.indexOf(charged[1])
            events[i + 1].shouldBeInstanceOf<RunEvent.NodeCompleted>().nodeId shouldBe "b"
        }

    @Test
    fun `a total may reach its limit, meters without a limit are counted, and a run without a budget still counts`() =
        runTest {
            chain.invoke(options = RunOptions(budget = Budget().withMeter("usd", 6.0))).meters shouldBe
                mapOf("usd" to 6.0, "tokens" to 1200.0)
            chain.invoke().meters shouldBe mapOf("usd" to 6.0, "tokens" to 1200.0)
        }

    @Test
    fun `a run that charges nothing has no totals and no MetersCharged event`() = runTest {
        val g = graph("plain", S) { start(node("a") { set(S.n, 1) }) }
        val events = record(g, RunOptions(budget = Budget().withMeter("usd", 1.0)))
        resultOf(events).meters.shouldBeEmpty()
        events.filterIsInstance<RunEvent.MetersCharged>() shouldBe emptyList()
    }

    @Test
    fun `failed attempts' charges count, their writes do not`() = runTest {
        val g = graph("retry", S) {
            start(
                node("call", retry = Retry.fixed(3, 1.milliseconds)) {
                    charge("tokens", 100.0)
                    set(S.n, attempt)
                    if (attempt < 3) throw IOException("model down")
                },
            )
        }
        val result = g.invoke(options = RunOptions(budget = Budget().withMeter("tokens", 1000.0)))
        result.meters shouldBe mapOf("tokens" to 300.0)
        result.state[S.n] shouldBe 3
    }

    @Test
    fun `a failing node's charges count and its own error stays the run's error`() = runTest {
        val g = graph("fails", S) {
            start(
                node("a") {
                    charge("usd", 5.0)
                    throw IOException("boom")
                },
            )
        }
        val result = g.events(options = RunOptions(budget = Budget().withMeter("usd", 1.0))).toList().last()
            .shouldBeInstanceOf<RunEvent.RunFailed>().result
        result.errors.single().shouldBeInstanceOf<IOException>()
        result.meters shouldBe mapOf("usd" to 5.0)
    }

    @Test
    fun `charges must be finite, not negative, on a named meter`() = runTest {
        val bad = listOf("usd" to -1.0, "usd" to Double.NaN, "usd" to Double.POSITIVE_INFINITY, " " to 1.0)
        for ((meter, amount) in bad) {
            val g = graph("bad", S) { start(node("a") { charge(meter, amount) }) }
            val error = shouldThrow<GraphRunException> { g.invoke() }.cause
            error.shouldBeInstanceOf<IllegalArgumentException>().message shouldContain "Node 'a'"
        }
        shouldThrow<IllegalArgumentException> { Budget().withMeter("usd", -1.0) }
        shouldThrow<IllegalArgumentException> { Budget().withMaxNodeExecutions(0) }
        shouldThrow<IllegalArgumentException> { Budget().withMaxWallTime(0.seconds) }
    }

    @Test
    fun `the smaller of the budget's and the graph's maxNodeExecutions applies, and the error says whose it is`() =
        runTest {
            val loop = graph("loop", S) {
                val a = node("a") { update(S.n) { it + 1 } }
                start(a)
                a.then(a) { true }
                config { maxNodeExecutions = 10 }
            }
            val byBudget = shouldThrow<GraphRunException> {
                loop.invoke(options = RunOptions(budget = Budget().withMaxNodeExecutions(3)))
            }
            byBudget.result.state[S.n] shouldBe 3
            val budgetError = byBudget.cause.shouldBeInstanceOf<LimitExceededException>()
            budgetError.limit shouldBe "maxNodeExecutions"
            budgetError.value shouldBe 3
            budgetError.total shouldBe 4
            budgetError.nodeId shouldBe "a"
            budgetError.meter.shouldBeNull()
            budgetError.message shouldContain "of the run's budget"
            val byGraph = shouldThrow<GraphRunException> {
                loop.invoke(options = RunOptions(budget = Budget().withMaxNodeExecutions(500)))
            }
            byGraph.result.state[S.n] shouldBe 10
            byGraph.cause.shouldBeInstanceOf<LimitExceededException>().message shouldContain
                "Raise maxNodeExecutions in the graph's config"
        }

    @Test
    fun `maxWallTime is spent by the run's time source, no node starts after and the node that ended late is named`() =
        runTest {
            val g = graph("slow", S) {
                val a = node("a") { delay(5.seconds) }
                val b = node("b") {
                    delay(5.seconds)
                    set(S.log, listOf("b"))
                }
                val c = node("c") { set(S.log, listOf("c")) }
                start(a)
                a then b
                b then c
            }
            val events = record(g, RunOptions(budget = Budget().withMaxWallTime(7.seconds)))
            val result = resultOf(events)
            val error = result.error.shouldBeInstanceOf<LimitExceededException>()
            error.limit shouldBe "maxWallTime"
            error.value shouldBe java.time.Duration.ofSeconds(7)
            error.total shouldBe java.time.Duration.ofSeconds(10)
            error.nodeId shouldBe "b"
            // A budget, not a deadline: b was not interrupted, its writes applied; c never started.
            result.node("b").status shouldBe Status.COMPLETED
            result.state[S.log] shouldBe listOf("b")
            result.node("c").status shouldBe Status.PENDING
            g.invoke(options = RunOptions(budget = Budget().withMaxWallTime(10.seconds))).state[S.log] shouldBe
                listOf("b", "c")
        }

    @Test
    fun `an interceptor charges through its chain, from what the call returned`() = runTest {
        val meter = NodeInterceptor { chain ->
            val writes = chain.proceed()
            chain.charge("tokens", writes.size * 10.0)
            writes
        }
        val result = chain.invoke(options = RunOptions(interceptors = listOf(meter)))
        result.meters shouldBe mapOf("usd" to 6.0, "tokens" to 1230.0)
    }

    @Test
    fun `exact totals, parallel charges of 0,1 0,2 0,3 reach a limit of 0,6 in every order`() = runTest {
        for (order in listOf(listOf(1, 2, 3), listOf(3, 2, 1), listOf(2, 3, 1), listOf(1, 3, 2))) {
            val g = graph("exact", S) {
                val nodes = (1..3).map { k ->
                    node("n$k") {
                        delay(order.indexOf(k).seconds)
                        charge("usd", k / 10.0)
                    }
                }
                start(*nodes.toTypedArray())
            }
            val result = g.invoke(options = RunOptions(budget = Budget().withMeter("usd", 0.6)))
            result.status shouldBe Status.COMPLETED
            result.meters shouldBe mapOf("usd" to 0.6)
        }
        // What a Double sum would have given in one of these orders.
        (0.1 + 0.2 + 0.3 > 0.6) shouldBe true
    }

    @Test
    fun `charges in child runs and map tasks count toward the parent run's meters, once`() = runTest {
        val child = graph("child", S) {
            val x = node("x") { charge("usd", 1.0) }
            val y = node("y") { charge("usd", 1.0) }
            start(x)
            x then y
        }
        val parent = graph("parent", S) {
            val sub = subgraph("sub", child) {}
            val fan = map("fan", over = S.items) { item -> charge("usd", if (item == "big") 3.0 else 0.5) }
            val each = map("each", over = S.items, graph = child) {}
            start(sub)
            sub then fan
            fan then each
        }
        val input = stateOf(S.items to listOf("a", "big", "b"))
        val events = parent.events(input).toList()
        EventInvariants.check(events)
        val result = resultOf(events)
        result.status shouldBe Status.COMPLETED
        result.meters shouldBe mapOf("usd" to 2.0 + 4.0 + 6.0)
        result.child("sub").meters shouldBe mapOf("usd" to 2.0)
        // One event per execution of the run's own graph: the composite's, with its children's charges.
        events.filterIsInstance<RunEvent.MetersCharged>().map { it.path to it.charges["usd"] } shouldBe
            listOf("sub" to 2.0, "fan" to 4.0, "each" to 6.0)
        // The parent's budget is checked when the composite node ends.
        val stopped = parent.events(input, RunOptions(budget = Budget().withMeter("usd", 5.0))).toList()
        EventInvariants.check(stopped)
        val error = resultOf(stopped).error.shouldBeInstanceOf<LimitExceededException>()
        error.nodeId shouldBe "fan"
        error.total shouldBe 6.0
        resultOf(stopped).node("each").status shouldBe Status.PENDING
    }

    @Test
    fun `with failFast the crossing cancels the branches still running`() = runTest {
        val g = graph("ff", S) {
            val quick = node("quick") { charge("usd", 5.0) }
            val slow = node("slow") {
                delay(10.seconds)
                set(S.n, 1)
            }
            start(quick, slow)
            config { failFast = true }
        }
        val result = resultOf(record(g, RunOptions(budget = Budget().withMeter("usd", 1.0))))
        result.error.shouldBeInstanceOf<LimitExceededException>().nodeId shouldBe "quick"
        result.node("slow").status shouldBe Status.CANCELLED
        result.state[S.n] shouldBe 0
    }
}
