package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Stress.Kind
import dev.trellis.runtime.Stress.perform
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import kotlin.random.Random
import kotlin.time.Duration.Companion.seconds

/**
 * Stress of the scheduler's workers and drive right on real threads (`Dispatchers.Default`): wide fan-outs of
 * random quick / CPU-bound / suspending branches, loops of fan-outs, concurrency limits, concurrent runs of one
 * graph and slow collectors. Every test asserts invariants (each branch exactly once, join once, event pairing),
 * never timings, and fails instead of hanging.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WorkerStressTest {
    object S : StateSchema("worker-stress") {
        /** The run's plan: per branch, the name of its [Kind], or "" when its edge is not taken. */
        val plan = key("plan", default = emptyList<String>())
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val hits = key("hits", default = 0, reducer = Reducer.sum())
        val n = key("n", default = 0)
    }

    /** entry -> b0..b(width-1) (each taken when its plan entry is set) -> join. */
    private fun fanOut(
        width: Int,
        ran: AtomicIntegerArray?,
        joins: AtomicInteger?,
        bodies: Stress.Bodies? = null,
    ): Graph =
        graph("fan-out-$width", S) {
            val entry = node("entry") { }
            val join = node("join") {
                joins?.incrementAndGet()
                set(S.log, listOf("join"))
            }
            start(entry)
            for (i in 0 until width) {
                val branch = node("b$i") {
                    val body: suspend () -> Unit = {
                        ran?.incrementAndGet(i)
                        perform(Kind.valueOf(state[S.plan][i]))
                        set(S.log, listOf("b$i"))
                    }
                    if (bodies == null) body() else bodies.track { body() }
                }
                entry.then(branch) { it[S.plan][i] != "" }
                branch then join
            }
        }

    private fun randomPlan(random: Random, width: Int, kinds: List<Kind> = Stress.kinds): List<String> =
        List(width) { if (random.nextInt(8) == 0) "" else kinds[random.nextInt(kinds.size)].name }

    private fun checkFanOut(result: RunResult, plan: List<String>, context: String) {
        val taken = plan.indices.filter { plan[it] != "" }.map { "b$it" }
        check(result.status == Status.COMPLETED) { "$context: status ${result.status}, errors ${result.errors}" }
        val log = result.state[S.log]
        check(
            log.sorted() == (taken + "join").sorted(),
        ) { "$context: log $log, expected each of $taken once, then join" }
        check(log.last() == "join") { "$context: join did not run last: $log" }
        check(result.node("join").executions == 1) { "$context: join ran ${result.node("join").executions} times" }
        for (i in plan.indices) {
            val expected = if (plan[i] == "") 0 else 1
            check(
                result.node("b$i").executions == expected,
            ) { "$context: b$i started ${result.node("b$i").executions} times" }
        }
        check(result.executing().isEmpty()) { "$context: still EXECUTING: ${result.executing()}" }
    }

    @Test
    fun `random wide fan-outs complete every taken branch exactly once and the join once, run after run`() {
        val width = 48
        val ran = AtomicIntegerArray(width)
        val joins = AtomicInteger()
        val g = fanOut(width, ran, joins)
        val random = Random(42)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(300) { rep ->
                val plan = randomPlan(random, width)
                for (i in 0 until width) ran.set(i, 0)
                joins.set(0)
                context = "rep $rep, plan $plan"
                val run = g.record(stateOf(S.plan to plan))
                checkFanOut(run.result, plan, context)
                for (i in 0 until width) {
                    check(
                        ran.get(i) == (
                            if (plan[i] ==
                                ""
                            ) {
                                0
                            } else {
                                1
                            }
                        ),
                    ) { "$context: body of b$i ran ${ran.get(i)} times" }
                }
                joins.get() shouldBe 1
                run.all<RunEvent.NodeStarted>().size shouldBe plan.count { it != "" } + 2
                run.all<RunEvent.Custom>().size shouldBe plan.count { it == Kind.EMIT.name }
            }
        }
    }

    @Test
    fun `fan-outs of nodes that never suspend, learned quick then slow, still complete (invoke, no events)`() {
        // Same graph, alternating phases: all quick (the runtime learns they start quickly), then CPU-bound ones that
        // the worker believes quick, so the stall monitor must hand the queue to runners.
        val width = 32
        val g = fanOut(width, null, null)
        val random = Random(7)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(120) { rep ->
                val kinds = if (rep % 2 == 0) listOf(Kind.QUICK) else listOf(Kind.QUICK, Kind.SPIN, Kind.LONG_SPIN)
                val plan = randomPlan(random, width, kinds)
                context = "rep $rep, plan $plan"
                checkFanOut(g.invoke(stateOf(S.plan to plan)), plan, context)
            }
        }
    }

    @Test
    fun `concurrent runs of one graph (shared start costs, shared stall monitor) each complete exactly`() {
        val width = 24
        val g = fanOut(width, null, null)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(40) { round ->
                val plans = List(6) { randomPlan(Random(round * 31 + it), width) }
                context = "round $round"
                val results = plans.map { plan ->
                    async(Dispatchers.Default) { plan to g.record(stateOf(S.plan to plan)).result }
                }.awaitAll()
                for ((i, pair) in results.withIndex()) {
                    checkFanOut(
                        pair.second,
                        pair.first,
                        "round $round, run $i, plan ${pair.first}",
                    )
                }
            }
        }
    }

    @Test
    fun `maxConcurrency bounds the bodies running at once on real threads`() {
        val width = 24
        val random = Random(3)
        var context = ""
        Stress.deadline(what = { context }) {
            for (limit in listOf(1, 2, 3, 4)) {
                val bodies = Stress.Bodies()
                val g = graph("limited-$limit", S) {
                    val entry = node("entry") { }
                    val join = node("join") { set(S.log, listOf("join")) }
                    start(entry)
                    for (i in 0 until width) {
                        val branch = node("b$i") {
                            bodies.track {
                                perform(Kind.valueOf(state[S.plan][i]))
                                set(S.log, listOf("b$i"))
                            }
                        }
                        entry.then(branch) { it[S.plan][i] != "" }
                        branch then join
                    }
                    config { maxConcurrency = limit }
                }
                repeat(40) { rep ->
                    val plan = randomPlan(random, width)
                    context = "limit $limit, rep $rep, plan $plan"
                    val run = g.record(stateOf(S.plan to plan))
                    checkFanOut(run.result, plan, context)
                    check(bodies.maxInside.get() <= limit) { "$context: ${bodies.maxInside.get()} bodies ran at once" }
                    // NodeStarted .. end pairs open at once never exceed the limit either.
                    var open = 0
                    var maxOpen = 0
                    for (e in run.events) {
                        if (e is RunEvent.NodeStarted) maxOpen = maxOf(maxOpen, ++open)
                        if (e is RunEvent.NodeCompleted || e is RunEvent.NodeFailed ||
                            e is RunEvent.NodeCancelled
                        ) {
                            open--
                        }
                    }
                    check(maxOpen <= limit) { "$context: $maxOpen executions open at once in the events" }
                }
                bodies.checkAllExited("limit $limit")
            }
        }
    }

    @Test
    fun `a slow collector with a wide fan-out gets every event, in pairing order`() {
        val width = 150
        val g = fanOut(width, null, null)
        val random = Random(11)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(12) { rep ->
                val plan = randomPlan(random, width)
                context = "rep $rep"
                val collector = Random(rep)
                val events = g.events(stateOf(S.plan to plan)).onEach {
                    when (collector.nextInt(4)) {
                        0 -> delay(1)
                        1 -> yield()
                        2 -> Stress.spinMicros(20)
                        else -> Unit
                    }
                }.toList()
                EventInvariants.check(events)
                checkFanOut(events.last().terminalResult, plan, context)
                events.count { it is RunEvent.NodeStarted } shouldBe plan.count { it != "" } + 2
            }
        }
    }

    @Test
    fun `a loop of fan-outs runs thousands of iterations in constant stack`() {
        val iterations = 3_000
        val width = 6
        val maxDepth = AtomicInteger()
        val ran = AtomicIntegerArray(width)

        fun taken(iteration: Int, i: Int) = (iteration * 7 + i * 13) % 5 != 0

        fun kind(iteration: Int, i: Int): Kind = when ((iteration + i) % 4) {
            0 -> Kind.QUICK
            1 -> Kind.SPIN
            2 -> Kind.YIELD
            else -> Kind.QUICK
        }
        val g = graph("loop-fan-out", S) {
            val head = node("head") { update(S.n) { it + 1 } }
            val join = node("join") {
                if (state[S.n] % 100 == 0) maxDepth.accumulateAndGet(Thread.currentThread().stackTrace.size, ::maxOf)
            }
            start(head)
            for (i in 0 until width) {
                val branch = node("b$i") {
                    val n = state[S.n]
                    if (n % 97 == 0) maxDepth.accumulateAndGet(Thread.currentThread().stackTrace.size, ::maxOf)
                    ran.incrementAndGet(i)
                    val k = kind(n, i)
                    if (k == Kind.SPIN) Stress.spinMicros(5) else perform(k)
                    set(S.hits, 1)
                }
                head.then(branch) { taken(it[S.n], i) }
                branch then join
            }
            join.route(head, END) { if (it[S.n] < iterations) head else END }
            config { maxNodeExecutions = iterations * (width + 2) }
        }
        Stress.deadline(40.seconds, what = { "loop" }) {
            val result = g.invoke(options = RunOptions(executionHistoryLimit = 100))
            result.status shouldBe Status.COMPLETED
            result.state[S.n] shouldBe iterations
            val expected = (1..iterations).sumOf { n -> (0 until width).count { taken(n, it) } }
            result.state[S.hits] shouldBe expected
            (0 until width).sumOf { ran.get(it) } shouldBe expected
            result.node("join").executions shouldBe iterations
            check(maxDepth.get() < 400) { "stack depth grew to ${maxDepth.get()} frames" }
        }
    }
}
