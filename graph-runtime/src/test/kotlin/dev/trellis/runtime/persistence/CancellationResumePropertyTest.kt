package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.reference.GraphSpec
import dev.trellis.runtime.reference.wire
import dev.trellis.runtime.resume
import dev.trellis.runtime.stateAt
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.collect
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Test
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes

/**
 * Cancellation loses no work (`docs/semantics.md` §6, "What a cancellation writes"): a run cancelled at any point —
 * its event flow cut after k events (`take(k)`), its coroutine cancelled at a random virtual time — and then
 * resumed ends exactly as the same run left uninterrupted: same status, the same executions of every node, the same
 * state. Random graphs of [GraphSpec] (without failures: a completed run's outcome does not depend on timing, §5), on
 * each store. The Java publisher's cancel is covered in java-facade (`PublisherCancelResumeTest`).
 */
class CancellationResumePropertyTest {
    object C : StateSchema("cancel-resume") {
        val counters: List<StateKey<Int>> = List(10) { key("c$it", default = 0) }
        val sum = key("sum", default = 0, reducer = Reducer.sum())
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    class Flaky(node: Int) : RuntimeException("node $node fails this attempt")

    private fun GraphSpec.toGraph(): Graph {
        val spec = this
        return graph("cancel-resume", C) {
            val refs = (0 until spec.size).map { i ->
                val flaky = spec.flaky[i]
                val pause = GraphSpec.RETRY_DELAY.milliseconds
                val retry = if (flaky == 0) null else Retry.fixed(flaky + 1, pause).retryOn { it is Flaky }
                node("n$i", retry = retry) {
                    delay(spec.duration(i, executionCount).toLong())
                    if (attempt <= flaky) throw Flaky(i)
                    set(C.counters[i], executionCount)
                    set(C.sum, i + 1)
                    set(C.log, listOf("n$i#$executionCount"))
                }
            }

            wire(spec, refs, C.counters)
        }
    }

    /** What an uninterrupted run did, and how long (events, virtual ms) it took. */
    private class Baseline(val result: RunResult, val events: Int, val millis: Long, val appends: Int)

    /**
     * Where a run is cut: after k events ([TAKE]), by `Job.cancel` at a virtual time ([CANCEL_JOB]), or by a
     * cancellation that arrives while the k-th checkpoint is being written and the write completes anyway ([APPEND]:
     * what a store that writes on the caller's thread, or a cancellation from another thread, does — the other
     * running nodes see their cancellation before the append returns).
     */
    private enum class Cut { TAKE, CANCEL_JOB, APPEND }

    /** [inner], where the [cutAt]-th append cancels [job] and lets its cancelled nodes end before it is written. */
    private class CancellingStore(val inner: CheckpointStore, val cutAt: Int) : CheckpointStore by inner {
        var job: Job? = null
        private var appends = 0

        override suspend fun append(lease: Lease, record: CheckpointRecord) {
            if (++appends == cutAt) {
                job!!.cancel()
                withContext(NonCancellable) { repeat(3) { yield() } }
            }
            inner.append(lease, record)
        }
    }

    private var runs = 0

    private fun TestScope.options(store: CheckpointStore, runId: String) = RunOptions(
        runId = runId,
        checkpointing = Checkpointing(store),
        timeSource = testScheduler.timeSource,
    )

    private suspend fun TestScope.baseline(g: Graph): Baseline {
        val started = testScheduler.currentTime
        val events = g.events(options = options(InMemoryCheckpointStore(), "baseline")).toList()
        val result = when (val last = events.last()) {
            is RunEvent.RunCompleted -> last.result
            is RunEvent.RunFailed -> last.result
            else -> error("unexpected end $last")
        }
        val appends = events.count { it is RunEvent.CheckpointSaved }
        return Baseline(result, events.size, testScheduler.currentTime - started, appends)
    }

    private fun same(expected: RunResult, actual: RunResult, size: Int) {
        actual.status shouldBe expected.status
        val nodes = (0 until size).map { "n$it" }
        nodes.map { actual.node(it).executions } shouldBe nodes.map { expected.node(it).executions }
        nodes.map { actual.node(it).status } shouldBe nodes.map { expected.node(it).status }
        actual.state[C.sum] shouldBe expected.state[C.sum]
        actual.state[C.log].sorted() shouldBe expected.state[C.log].sorted()
        C.counters.map { actual.state[it] } shouldBe C.counters.map { expected.state[it] }
    }

    /**
     * Cuts each of [graphs] random graphs at [cuts] random points on the store [storeFor] makes for each graph, resumes
     * each cut run and compares it with the graph's uninterrupted run. Returns the number of cut points checked.
     */
    private fun property(seed: Long, graphs: Int, cuts: Int, storeFor: () -> CheckpointStore): Int {
        var checked = 0
        val failures = HashMap<Cut, MutableList<AssertionError>>()
        val tried = HashMap<Cut, Int>()
        val random = Random(seed)
        var done = 0
        while (done < graphs) {
            val graphSeed = random.nextLong()
            val spec = GraphSpec.generate(Random(graphSeed), maxNodeExecutions = 60, failures = false)
            val g = spec.toGraph()
            val store = storeFor()
            runTest(timeout = 5.minutes) {
                val base = baseline(g)
                if (base.result.status != Status.COMPLETED) return@runTest
                done++
                repeat(cuts) { round ->
                    val cut = Cut.entries[random.nextInt(Cut.entries.size)]
                    val at = when (cut) {
                        Cut.TAKE -> random.nextInt(1, base.events)
                        Cut.CANCEL_JOB -> random.nextLong(0, base.millis + 1)
                        Cut.APPEND -> random.nextInt(1, base.appends + 1)
                    }
                    val runId = "cut-${seed}_${runs++}"
                    val options = options(if (cut == Cut.APPEND) CancellingStore(store, at.toInt()) else store, runId)
                    try {
                        withClue("graph seed $graphSeed, cut $cut at $at (round $round), run $runId\n$spec") {
                            cutAndResume(g, options, cut, at, base.result, spec.size)
                        }
                    } catch (e: AssertionError) {
                        failures.getOrPut(cut) { ArrayList() } += e
                    }
                    tried[cut] = (tried[cut] ?: 0) + 1
                    checked++
                }
            }
        }
        if (failures.isNotEmpty()) {
            val rates = Cut.entries.joinToString { "$it ${failures[it]?.size ?: 0}/${tried[it] ?: 0}" }
            throw AssertionError(
                "${failures.values.sumOf { it.size }} of $checked cut runs did not resume to the uninterrupted " +
                    "outcome ($rates); the first:\n${failures.values.first().first().message}",
            )
        }
        return checked
    }

    private suspend fun TestScope.cutAndResume(
        g: Graph,
        options: RunOptions,
        cut: Cut,
        at: Number,
        expected: RunResult,
        size: Int,
    ) {
        when (cut) {
            Cut.TAKE -> g.events(options = options).take(at.toInt()).collect()
            Cut.CANCEL_JOB -> {
                val job = launch { g.invoke(options = options) }
                testScheduler.advanceTimeBy(at.toLong())
                job.cancel()
                job.join()
            }
            Cut.APPEND -> {
                val cutting = options.checkpointing!!.store as CancellingStore
                val job = launch(start = CoroutineStart.LAZY) { g.invoke(options = options) }
                cutting.job = job
                job.join()
            }
        }
        val store = options.checkpointing!!.store.let { if (it is CancellingStore) it.inner else it }
        val runId = options.runId!!
        val latest = store.latest(runId)
        when (latest?.status) {
            null -> same(expected, g.invoke(options = options), size)
            "COMPLETED" -> {
                val state = g.stateAt(store, runId)
                state[C.sum] shouldBe expected.state[C.sum]
                state[C.log].sorted() shouldBe expected.state[C.log].sorted()
            }
            else -> same(expected, g.resume(runId, options), size)
        }
    }

    @Test
    fun `in memory - a cancelled run resumes to the uninterrupted outcome`() {
        val store = InMemoryCheckpointStore(maxRuns = 100_000)
        property(seed = 1, graphs = GRAPHS, cuts = CUTS) { store } shouldBe GRAPHS * CUTS
    }

    @Test
    fun `SQLite - a cancelled run resumes to the uninterrupted outcome`() {
        SqlDatabase(Backend.SQLITE).use { db ->
            val store = db.store()
            property(seed = 2, graphs = SQL_GRAPHS, cuts = SQL_CUTS) { store } shouldBe SQL_GRAPHS * SQL_CUTS
        }
    }

    @Test
    fun `PostgreSQL - a cancelled run resumes to the uninterrupted outcome`() {
        SqlDatabase(Backend.POSTGRES).use { db ->
            val store = db.store()
            property(seed = 3, graphs = PG_GRAPHS, cuts = SQL_CUTS) { store } shouldBe PG_GRAPHS * SQL_CUTS
        }
    }

    private companion object {
        val GRAPHS = Integer.getInteger("trellis.cancelResume.graphs", 100)
        val CUTS = Integer.getInteger("trellis.cancelResume.cuts", 20)
        val SQL_GRAPHS = Integer.getInteger("trellis.cancelResume.sqlGraphs", 40)
        val PG_GRAPHS = Integer.getInteger("trellis.cancelResume.pgGraphs", 6)
        val SQL_CUTS = Integer.getInteger("trellis.cancelResume.sqlCuts", 15)
    }
}
