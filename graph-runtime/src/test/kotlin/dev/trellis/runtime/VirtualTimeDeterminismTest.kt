package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.internal.execution.StallMonitor
import dev.trellis.runtime.internal.execution.StartCosts
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TestTimeSource

/**
 * `docs/semantics.md` §10: in virtual time, the order of a run's events depends on the graph alone, not on how busy
 * the host is. The runtime's wall-clock measurements (`StartCosts`) and its wall-clock stall monitor decide
 * which coroutine starts a node on real threads; here they are perturbed at random between runs and inside runs,
 * and every run must still produce the very same events, timestamps included.
 */
@OptIn(InternalTrellisApi::class)
class VirtualTimeDeterminismTest {
    object S : StateSchema("virtual-determinism") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val round = key("round", default = 0)
    }

    /** How the next run's start costs are set; [Random] draws them. */
    private var perturb: (Random) -> Long = { 0 }
    private var random = Random(0)
    private lateinit var g: Graph

    /** Sets every start cost of [g] as [perturb] says (a node body calls it too, to change decisions mid-run). */
    private fun scramble() {
        val costs = StartCosts.of(g.topology)
        for (i in 0 until costs.length()) costs.set(i, perturb(random))
    }

    /** The runs the JVM-wide stall monitor watches (it lets go of ended runs within a millisecond or two). */
    private val watched = StallMonitor::class.java.getDeclaredField("watched").apply {
        isAccessible = true
    }.get(StallMonitor) as Collection<*>

    /** How many runs the stall monitor watched at the end of each [spin]: a virtual-time run is never among them. */
    private val watchedAfterSpins = ArrayList<Int>()

    /**
     * Spins [millis] of real time without suspending, with work queued behind it: long enough for the stall monitor
     * to think the queue stuck, if it watched the run.
     */
    private fun spin(millis: Long) {
        val until = System.nanoTime() + millis * 1_000_000
        while (System.nanoTime() < until) Thread.onSpinWait()
        watchedAfterSpins += watched.size
    }

    /**
     * A loop of three rounds around a fan-out of six branches, with ties everywhere: pairs of branches that end at the
     * same instant, two that never suspend, one that computes for a few real milliseconds without suspending, and a
     * side branch off the loop.
     */
    private fun build(): Graph = graph("ties", S) {
        val plan = node("plan") {
            scramble()
            update(S.round) { it + 1 }
        }
        val join = node("join") {
            scramble()
            delay(5)
        }
        val audit = node("audit") {
            delay(5)
            set(S.log, listOf("audit"))
        }
        start(plan)
        for (i in 0 until 6) {
            val branch = node("b$i") {
                scramble()
                when (i) {
                    0, 1 -> delay(10)
                    2, 3 -> delay(20)
                    4 -> spin(3)
                    else -> Unit
                }
                set(S.log, listOf("b$i"))
            }
            plan then branch
            branch then join
        }
        plan then audit
        join.then(plan) { it[S.round] < 3 }
    }

    private suspend fun TestScope.recordOnce(options: RunOptions?): List<String> {
        val run = if (options == null) g.record() else g.record(options = options)
        run.result.status shouldBe Status.COMPLETED
        run.result.node("plan").executions shouldBe 3
        return run.events.map { "$it @${it.timestamp.toEpochMilli()}" }
    }

    private fun ordersUnderPerturbation(options: TestScope.() -> RunOptions?) {
        g = build()
        val modes: List<(Random) -> Long> = listOf(
            { 0L }, // every node believed quick: started by the worker that polls it
            { Long.MAX_VALUE }, // every node believed long: each gets a coroutine of its own
            { if (it.nextBoolean()) 0L else Long.MAX_VALUE },
            { it.nextLong(0, 40_000) }, // around the 10 µs threshold
        )
        var reference: List<String>? = null
        for (run in 0 until 40) {
            perturb = modes[run % modes.size]
            random = Random(run)
            scramble()
            var events: List<String>? = null
            runTest { events = recordOnce(options()) }
            val expected = reference ?: events!!.also { reference = it }
            withClue("run $run (start costs perturbed by mode ${run % modes.size})") { events shouldBe expected }
        }
        watchedAfterSpins.size shouldBe 40 * 3
        withClue("runs watched by the stall monitor while a node of a virtual-time run spun") {
            watchedAfterSpins.toSet() shouldBe
                setOf(0)
        }
    }

    @Test
    fun `perturbed start costs change nothing in virtual time (test dispatcher and time source passed)`() {
        ordersUnderPerturbation { virtualTime() }
    }

    @Test
    fun `perturbed start costs change nothing in virtual time (picked up from runTest)`() {
        ordersUnderPerturbation { null }
    }

    @Test
    fun `a virtual-time run on real threads never waits behind a node that blocks its thread`() {
        // A virtual time source with real threads: no start costs and no stall monitor either. A worker that starts a
        // node believed quick while work is queued behind it would hold that work until the node ends; here the node
        // waits (blocking its thread) for its sibling to start, so that would be a hang, cut short by the latch's timeout.
        var sibling = CountDownLatch(1)
        val g = graph("blocked", S) {
            val entry = node("entry") { }
            val waits =
                node(
                    "waits",
                ) { set(S.log, listOf(if (sibling.await(10, TimeUnit.SECONDS)) "overlapped" else "held up")) }
            val other = node("other") { sibling.countDown() }
            start(entry)
            entry then waits
            entry then other
        }
        val timeSource = TestTimeSource()
        val outcomes = ArrayList<List<String>>()
        Stress.deadline(60.seconds) {
            repeat(3) {
                sibling = CountDownLatch(1)
                for (i in 0 until g.topology.size) StartCosts.of(g.topology).set(i, 0)
                outcomes +=
                    g.invoke(
                        options = RunOptions(dispatcher = Dispatchers.Default, timeSource = timeSource),
                    ).state[S.log]
                timeSource += 1.milliseconds
            }
        }
        outcomes shouldBe List(3) { listOf("overlapped") }
    }
}
