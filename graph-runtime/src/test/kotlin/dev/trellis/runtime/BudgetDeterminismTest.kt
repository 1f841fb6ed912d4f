package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.math.BigDecimal
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds

/**
 * Parallel branches charging concurrently, re-timed many times in virtual time (`docs/semantics.md` §13.4): whether a
 * run exceeds does not depend on timing, the totals are exact, and the node named is the one whose end first brought
 * the total above the limit, with nothing started after it.
 */
class BudgetDeterminismTest {
    object S : StateSchema("budget-determinism") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** Charges of each branch, deterministic per branch and execution: 0.1, 0.2, … (sums a Double would get wrong). */
    private val charges = listOf(0.1, 0.2, 0.3, 0.7, 0.05, 1.1)
    private val exact = charges.fold(BigDecimal.ZERO) { sum, c -> sum + BigDecimal.valueOf(c) }.toDouble() // 2.45

    /** start -> six branches (each two steps, charging on both) -> join, with durations drawn from [random]. */
    private fun fanOut(random: Random): Graph = graph("fan", S) {
        val start = node("start") { set(S.log, listOf("start")) }
        val join = node("join") { set(S.log, listOf("join")) }
        start(start)
        charges.forEachIndexed { i, amount ->
            val first = random.nextLong(0, 20)
            val second = random.nextLong(0, 20)
            val a = node("b${i}a") {
                delay(first.milliseconds)
                charge("usd", amount / 2)
            }
            val b = node("b${i}b") {
                delay(second.milliseconds)
                charge("usd", amount / 2)
                charge("calls", 1.0)
            }
            start then a
            a then b
            b then join
        }
    }

    @Test
    fun `a run within the budget completes with the exact totals in every timing`() = runTest {
        val random = Random(18)
        repeat(300) {
            val result = fanOut(random).invoke(options = RunOptions(budget = Budget().withMeter("usd", exact)))
            result.status shouldBe Status.COMPLETED
            result.meters shouldBe mapOf("usd" to exact, "calls" to 6.0)
        }
    }

    @Test
    fun `a run over the budget fails in every timing, naming the first end that crossed it`() = runTest {
        val random = Random(4)
        val limit = 1.5
        val named = HashSet<String>()
        repeat(300) {
            val g = fanOut(random)
            val events = g.events(options = RunOptions(budget = Budget().withMeter("usd", limit))).toList()
            EventInvariants.check(events)
            val result = (events.last() as RunEvent.Terminal).result
            result.status shouldBe Status.FAILED
            val error = result.error.shouldBeInstanceOf<LimitExceededException>()
            result.errors.size shouldBe 1
            val charged = events.filterIsInstance<RunEvent.MetersCharged>()
            val crossing = charged.first { it.totals.getValue("usd") > limit }
            error.nodeId shouldBe crossing.nodeId
            error.total shouldBe crossing.totals.getValue("usd")
            // Totals are exact sums of what the executions that ended charged.
            val sum = charged.fold(BigDecimal.ZERO) { s, e -> s + BigDecimal.valueOf(e.charges.getValue("usd")) }
            result.meters.getValue("usd") shouldBe sum.toDouble()
            // Nothing started after the crossing execution's end; the join never ran.
            val crossedAt = events.indexOf(crossing)
            events.drop(crossedAt).filterIsInstance<RunEvent.NodeStarted>() shouldBe emptyList()
            result.node("join").status shouldBe Status.PENDING
            named += crossing.nodeId
        }
        // Re-timing really changed which branch crossed.
        (named.size > 1) shouldBe true
    }

    @Test
    fun `one timing is reproducible to the event`() = runTest {
        repeat(20) { seed ->
            val runs = List(2) {
                fanOut(Random(seed)).events(options = RunOptions(budget = Budget().withMeter("usd", 1.5))).toList()
                    .map { it.toString().substringAfter(", ") }
            }
            runs[0] shouldBe runs[1]
        }
    }
}
