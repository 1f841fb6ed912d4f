package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.reference.EdgeSpec
import dev.trellis.runtime.reference.GraphSpec
import dev.trellis.runtime.reference.ReferenceInterpreter
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.property.RandomSource
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import kotlin.random.Random

/**
 * The engine against [ReferenceInterpreter] on random graphs (`docs/semantics.md` §5 "Determinism").
 */
class SchedulerPropertyTest {
    object P : StateSchema("property") {
        val counters: List<StateKey<Int>> = List(10) { key("c$it", default = 0) }
        val sum = key("sum", default = 0, reducer = Reducer.sum())
        val log = key("log", default = emptyList<Int>(), reducer = Reducer.append())
    }

    class Boom(val node: Int) : RuntimeException("node $node fails")

    private fun GraphSpec.toGraph(delays: Boolean): Graph {
        val spec = this
        return graph("random", P) {
            val refs = (0 until spec.size).map { i ->
                node("n$i") {
                    if (delays) delay(spec.duration(i, executionCount).toLong())
                    if (executionCount == spec.failAt[i]) throw Boom(i)
                    set(P.counters[i], executionCount)
                    set(P.sum, i + 1)
                    set(P.log, listOf(i))
                }
            }
            fun ref(t: Int): NodeRef = if (t < 0) END else refs[t]
            start(*spec.entries.map { refs[it] }.toTypedArray())
            for (edge in spec.edges) {
                val from = refs[edge.from]
                when (edge) {
                    is EdgeSpec.Plain -> from then refs[edge.to]
                    is EdgeSpec.Conditional -> from.then(refs[edge.to]) { it[P.counters[edge.from]] < edge.below }
                    is EdgeSpec.Route -> from.route(*edge.targets.map(::ref).toTypedArray()) { ref(edge.select(it[P.counters[edge.from]])) }
                }
            }
            config {
                maxNodeExecutions = spec.maxNodeExecutions
                maxConcurrency = spec.maxConcurrency
            }
        }
    }

    /** Runs [spec] on the engine in virtual time, checking the event invariants. */
    private fun runVirtual(spec: GraphSpec): RecordedRun {
        var recorded: RecordedRun? = null
        runTest { recorded = spec.toGraph(delays = true).record(options = virtualTime()) }
        return recorded!!
    }

    private fun errorOf(result: RunResult): String? = when (val e = result.error) {
        null -> null
        is Boom -> "node ${e.node}"
        is LimitExceededException -> "limit".also { e.limit shouldBe "maxNodeExecutions" }
        else -> "unexpected $e"
    }

    private fun compare(expected: ReferenceInterpreter.Outcome, actual: RunResult, spec: GraphSpec, whatFor: String) {
        withClue("$whatFor\n$spec\nreference: $expected\nengine: $actual\n${actual.nodes.values.joinToString("\n")}") {
            actual.status shouldBe expected.status
            errorOf(actual) shouldBe expected.error
            (0 until spec.size).map { actual.node("n$it").status } shouldBe expected.statuses
            (0 until spec.size).map { actual.node("n$it").executions } shouldBe expected.counts
            actual.state[P.sum] shouldBe expected.sum
            actual.state[P.log].sorted() shouldBe expected.log
            (0 until spec.size).map { actual.state[P.counters[it]] } shouldBe
                (0 until spec.size).map { i -> if (expected.statuses[i] == Status.COMPLETED) expected.counts[i] else actual.state[P.counters[i]] }
            if (expected.status == Status.COMPLETED) {
                expected.triggersLeft shouldBe 0
                actual.nodes.values.forEach { it.status shouldNotBe Status.EXECUTING }
            }
        }
    }

    private fun samePlan(a: ReferenceInterpreter.Outcome, b: ReferenceInterpreter.Outcome) =
        a.status == b.status && a.statuses == b.statuses && a.counts == b.counts && a.sum == b.sum && a.log == b.log

    @Test
    fun `the engine matches the reference in virtual time, and durations do not change outcomes`() {
        val random = Random(20261123)
        var invariant = 0
        var choices = 0
        var choiceChanged = 0
        GraphSpec.arb().samples(RandomSource.seeded(7)).take(400).forEach { sample ->
            val spec = sample.value
            val expected = ReferenceInterpreter.run(spec)
            compare(expected, runVirtual(spec).result, spec, "same durations")

            val redrawn = spec.withDurations(random)
            val expected2 = ReferenceInterpreter.run(redrawn)
            compare(expected2, runVirtual(redrawn).result, redrawn, "redrawn durations")

            if (expected.status == Status.COMPLETED) {
                if (!expected.choseInFallback && !expected2.choseInFallback) {
                    invariant++
                    withClue("durations changed the outcome of\n$spec\nvs\n$redrawn\n$expected\n$expected2") {
                        samePlan(expected, expected2) shouldBe true
                    }
                } else {
                    choices++
                    if (!samePlan(expected, expected2)) choiceChanged++
                }
            }
            // In a DAG whose only entry has no predecessor, every node runs at most once.
            if (spec.isDag && spec.entries == listOf(0)) expected.counts.all { it <= 1 } shouldBe true
        }
        println("SchedulerPropertyTest: $invariant completed runs invariant under new durations; $choices used a fallback choice, $choiceChanged of them changed outcome")
        (invariant > 50) shouldBe true
    }

    @Test
    fun `on real threads the engine reaches the reference's outcome`() {
        val random = Random(99)
        var checked = 0
        runBlocking {
            GraphSpec.arb(failures = false).samples(RandomSource.seeded(11)).take(300).forEach { sample ->
                val spec = sample.value
                val outcomes = listOf(spec, spec.withDurations(random), spec.withDurations(random)).map { ReferenceInterpreter.run(it) }
                // Only graphs whose outcome is timing-independent in the reference (no fallback had to choose).
                if (outcomes.any { it.status != Status.COMPLETED || it.choseInFallback }) return@forEach
                if (!outcomes.all { samePlan(it, outcomes[0]) }) return@forEach
                val graph = spec.toGraph(delays = false)
                repeat(3) {
                    val run = graph.record(options = RunOptions(dispatcher = Dispatchers.Default))
                    compare(outcomes[0], run.result, spec, "real threads")
                }
                checked++
            }
        }
        println("SchedulerPropertyTest: $checked graphs checked on real threads")
        (checked > 100) shouldBe true
    }

    @Test
    fun `a limit failure names the limit in both`() {
        val spec = GraphSpec(
            size = 2,
            entries = listOf(0),
            edges = listOf(EdgeSpec.Plain(0, 1), EdgeSpec.Plain(1, 0)),
            durations = listOf(listOf(1), listOf(2)),
            failAt = listOf(0, 0),
            maxConcurrency = Int.MAX_VALUE,
            maxNodeExecutions = 7,
        )
        val expected = ReferenceInterpreter.run(spec)
        expected.error shouldBe "limit"
        expected.counts shouldBe listOf(4, 3)
        val run = runVirtual(spec)
        run.result.error.shouldBeInstanceOf<LimitExceededException>().value shouldBe 7
        compare(expected, run.result, spec, "limit")
    }
    @Test
    fun `two nodes on a cycle wait for each other in forward order, whatever finishes first`() {
        // s -> P -> A, s -> Q -> B, A -> B, B -> A while B's count < 1. B -> A closes the cycle (a back edge),
        // so A is upstream of B but not the other way round: B always waits for A, whichever of P and Q ends first.
        fun spec(p: Int, q: Int) = GraphSpec(
            size = 5,
            entries = listOf(0),
            edges = listOf(
                EdgeSpec.Plain(0, 1),
                EdgeSpec.Plain(0, 2),
                EdgeSpec.Plain(1, 3),
                EdgeSpec.Plain(2, 4),
                EdgeSpec.Plain(3, 4),
                EdgeSpec.Conditional(4, 3, below = 1),
            ),
            durations = listOf(listOf(1), listOf(p), listOf(q), listOf(1), listOf(1)),
            failAt = List(5) { 0 },
            maxConcurrency = Int.MAX_VALUE,
            maxNodeExecutions = 200,
        )
        val pFirst = spec(p = 1, q = 5)
        val qFirst = spec(p = 5, q = 1)
        val expectedPFirst = ReferenceInterpreter.run(pFirst)
        val expectedQFirst = ReferenceInterpreter.run(qFirst)
        expectedPFirst.counts shouldBe listOf(1, 1, 1, 1, 1)
        expectedQFirst.counts shouldBe listOf(1, 1, 1, 1, 1)
        expectedPFirst.choseInFallback shouldBe false
        expectedQFirst.choseInFallback shouldBe false
        compare(expectedPFirst, runVirtual(pFirst).result, pFirst, "P first")
        compare(expectedQFirst, runVirtual(qFirst).result, qFirst, "Q first")
    }
}
