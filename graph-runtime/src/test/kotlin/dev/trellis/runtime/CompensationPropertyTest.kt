package dev.trellis.runtime

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.util.Collections
import kotlin.random.Random
import kotlin.time.Duration.Companion.minutes

/**
 * For random graphs (fan-outs, joins, parallel branches, concurrency limits, graceful and fail-fast failure) and random
 * failure points, each re-timed many times in virtual time: a failed run compensates every completed execution of a
 * node with a compensation exactly once, in reverse completion order (the order of its `NodeCompleted` events), and a
 * completed run compensates nothing (`docs/semantics.md` §13.6).
 */
class CompensationPropertyTest {
    object P : StateSchema("saga-property") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val nightly = System.getProperty("trellis.nightly") == "true"

    @Test
    fun `every completed execution with a compensation is compensated exactly once, in reverse completion order`() =
        runTest(timeout = 10.minutes) {
            val graphs = if (nightly) 2_000 else 150
            val timings = if (nightly) 50 else 20
            var failedRuns = 0
            var compensated = 0
            for (seed in 0 until graphs) {
                val random = Random(seed)
                val n = random.nextInt(2, 9)
                val compensable = BooleanArray(n) { random.nextInt(10) < 7 }
                val failing = random.nextInt(n + 1) // n: no node fails
                val durations = LongArray(n)
                val undone = Collections.synchronizedList(ArrayList<String>())
                val g = graph("saga$seed", P) {
                    val refs = (0 until n).map { i ->
                        node("n$i") {
                            delay(durations[i])
                            if (i == failing) error("n$i fails")
                            set(P.log, listOf("n$i"))
                        }
                    }
                    for (i in 0 until n) {
                        if (compensable[i]) refs[i].compensate { undone += "n$i#1" }
                    }
                    start(refs[0])
                    for (j in 1 until n) {
                        val parents = (0 until j).shuffled(random).take(random.nextInt(1, minOf(j, 2) + 1))
                        for (p in parents) refs[p] then refs[j]
                    }
                    config {
                        maxConcurrency = listOf(1, 2, Int.MAX_VALUE)[random.nextInt(3)]
                        failFast = random.nextBoolean()
                    }
                }
                repeat(timings) { timing ->
                    val t = Random(seed * 1_000L + timing)
                    for (i in 0 until n) durations[i] = t.nextLong(0, 40)
                    undone.clear()
                    val run = g.record()
                    val completedInOrder = run.all<RunEvent.NodeCompleted>()
                        .filter { compensable[it.nodeId.substring(1).toInt()] }
                        .map { "${it.path}#${it.execution}" }
                    withClue("graph $seed timing $timing (failing n$failing, durations ${durations.toList()})") {
                        if (run.result.status == Status.FAILED) {
                            failedRuns++
                            compensated += undone.size
                            undone.toList() shouldBe completedInOrder.reversed()
                            run.result.compensations.map { "${it.path}#${it.execution}" } shouldBe undone.toList()
                            run.result.compensations.all { it.status == Status.COMPLETED } shouldBe true
                        } else {
                            run.result.status shouldBe Status.COMPLETED
                            undone.shouldBeEmpty()
                            run.result.compensations.shouldBeEmpty()
                        }
                    }
                }
            }
            // The generator must exercise the rule: many failed runs, many compensations.
            (failedRuns > graphs * timings / 4) shouldBe true
            (compensated > failedRuns) shouldBe true
        }
}
