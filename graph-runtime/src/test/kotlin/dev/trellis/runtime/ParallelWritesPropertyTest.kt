package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.GraphValidationException
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.Parallelism
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.reference.GraphSpec
import dev.trellis.runtime.reference.wire
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds

/**
 * The build-time parallelism of `docs/semantics.md` §12 is sound: on random graphs (those of [SchedulerPropertyTest]:
 * DAGs and cyclic graphs, fan-outs, routes, failures, retries, concurrency limits), each run in many timings, every
 * pair of nodes ever seen running at the same time is reported, every conflict of plain writes is between a reported
 * pair, and `validate()` / `build()` report exactly the pairs of the relation.
 */
@OptIn(InternalTrellisApi::class)
class ParallelWritesPropertyTest {
    object P : StateSchema("parallel") {
        val counters = List(10) { key("c$it", default = 0) }
        val shared = key("shared", default = -1)
    }

    class Boom : RuntimeException("fails")

    class Flaky : RuntimeException("fails this attempt")

    private val nightly = System.getProperty("trellis.nightly").toBoolean()
    private val graphs = if (nightly) 2_000 else 150
    private val timings = if (nightly) 20 else 6

    /**
     * [spec] as a graph. Node `i` writes its own counter and, with [writeShared], the shared key without a reducer;
     * with [declare], each node declares `shared` (and its counter) as its write slice.
     */
    private fun GraphSpec.toGraph(writeShared: Boolean, declare: Boolean): Graph {
        val spec = this
        return graph("random", P) {
            val refs = (0 until spec.size).map { i ->
                val flaky = spec.flaky[i]
                val retry = if (flaky ==
                    0
                ) {
                    null
                } else {
                    Retry.fixed(flaky + 1, GraphSpec.RETRY_DELAY.milliseconds).retryOn { it is Flaky }
                }
                node("n$i", retry = retry, writes = if (declare) setOf(P.shared, P.counters[i]) else null) {
                    delay(spec.duration(i, executionCount).toLong())
                    if (attempt <= flaky) throw Flaky()
                    if (executionCount == spec.failAt[i]) throw Boom()
                    set(P.counters[i], executionCount)
                    if (writeShared) set(P.shared, i)
                }
            }

            wire(spec, refs, P.counters)
        }
    }

    /** The pairs `(u, v)`, `u < v`, that the relation says can run in parallel. */
    private fun reported(graph: Graph): Set<Pair<Int, Int>> {
        val parallelism = Parallelism(graph.topology, graph.config.maxConcurrency)
        val n = graph.nodes.size
        return (0 until n).flatMap {
            u ->
            (u + 1 until n).map { u to it }
        }.filter { (u, v) -> parallelism.canRunInParallel(u, v) }.toSet()
    }

    /** The pairs of distinct nodes whose executions overlapped (between `NodeStarted` and their end event). */
    private fun overlapping(events: List<RunEvent>): Set<Pair<Int, Int>> {
        val running = HashSet<Int>()
        val pairs = HashSet<Pair<Int, Int>>()
        for (event in events) {
            when (event) {
                is RunEvent.NodeStarted -> {
                    val u = event.nodeId.removePrefix("n").toInt()
                    for (v in running) if (v != u) pairs += minOf(u, v) to maxOf(u, v)
                    running += u
                }
                is RunEvent.NodeCompleted -> running -= event.nodeId.removePrefix("n").toInt()
                is RunEvent.NodeFailed -> running -= event.nodeId.removePrefix("n").toInt()
                is RunEvent.NodeCancelled -> running -= event.nodeId.removePrefix("n").toInt()
                else -> Unit
            }
        }
        return pairs
    }

    @Test
    fun `every pair of nodes seen running at the same time, and every conflict, is reported`() {
        val random = Random(15)
        var parallelRuns = 0
        var conflicts = 0
        var observed = 0
        repeat(graphs) {
            val spec = GraphSpec.generate(random)
            val plain = spec.toGraph(writeShared = false, declare = false)
            val writing = spec.toGraph(writeShared = true, declare = false)
            val reported = reported(plain)
            reported shouldBe reported(writing)
            repeat(timings) { round ->
                val timed = if (round == 0) spec else spec.withDurations(random)
                for (graph in listOf(
                    timed.toGraph(writeShared = false, declare = false),
                    timed.toGraph(writeShared = true, declare = false),
                )) {
                    var events: List<RunEvent> = emptyList()
                    runTest { events = graph.record(options = virtualTime()).events }
                    val seen = overlapping(events)
                    withClue("$timed\nseen running together: $seen\nreported: $reported") {
                        for (pair in seen) reported shouldContain pair
                    }
                    if (seen.isNotEmpty()) parallelRuns++
                    observed += seen.size
                    for (failed in events.filterIsInstance<RunEvent.NodeFailed>()) {
                        val conflict = failed.error as? ConflictingUpdateException ?: continue
                        val u = conflict.nodeId.removePrefix("n").toInt()
                        val v = conflict.otherNodeId.removePrefix("n").toInt()
                        withClue("$timed\nconflict $conflict\nreported: $reported") {
                            reported shouldContain
                                (minOf(u, v) to maxOf(u, v))
                        }
                        conflicts++
                    }
                }
            }
        }
        println(
            "ParallelWritesPropertyTest: $graphs graphs x $timings timings; $parallelRuns runs with parallel nodes ($observed pairs), $conflicts conflicts",
        )
        (parallelRuns > graphs) shouldBe true
        (conflicts > graphs / 4) shouldBe true
    }

    @Test
    fun `validate() reports exactly the pairs of the relation, and build() refuses exactly the definite ones`() {
        val random = Random(16)
        var refused = 0
        var built = 0
        repeat(graphs) {
            val spec = GraphSpec.generate(random)
            val reported = reported(spec.toGraph(writeShared = false, declare = false))
            val names = reported.map { (u, v) -> "n$u" to "n$v" }.toSet()
            try {
                val graph = spec.toGraph(writeShared = true, declare = true)
                val report = graph.validate()
                report.parallelWrites.map { it.first to it.second }.toSet() shouldBe names
                report.parallelWrites.all { it.key == P.shared && !it.definite } shouldBe true
                report.nodesWithoutWrites shouldBe emptyList()
                built++
            } catch (e: GraphValidationException) {
                withClue("$spec\n${e.problems}\nreported: $names") {
                    for (problem in e.problems) {
                        val pair = Regex(
                            "Nodes '(n\\d+)' and '(n\\d+)' can run in parallel \\(they start together\\)",
                        ).find(problem)!!
                        names shouldContain (pair.groupValues[1] to pair.groupValues[2])
                    }
                }
                refused++
            }
        }
        println("ParallelWritesPropertyTest: $built graphs built, $refused refused by build()")
        (refused > 0) shouldBe true
        (built > 0) shouldBe true
    }
}
