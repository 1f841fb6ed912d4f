package dev.trellis.runtime

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Stress.Kind
import dev.trellis.runtime.Stress.perform
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.util.Collections
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * Stress of how runs end early on real threads: fail-fast with executions still queued, cancellation of the run at
 * random moments, collectors that stop, run timeouts, drains, and checkpoints written by node coroutines. Each run
 * must end (no hang), pair every NodeStarted with an end event, leave no execution EXECUTING and no node body or
 * coroutine running after it returned.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CancellationStressTest {
    object S : StateSchema("cancel-stress") {
        /** Per branch: the name of its [Kind], "FAIL_<kind>" to fail after doing it, or "" when not taken. */
        val plan = key("plan", default = emptyList<String>())
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    class Boom(message: String) : RuntimeException(message)

    private class Fixture(val width: Int, failFast: Boolean, timeoutMillis: Long? = null) {
        val bodies = Stress.Bodies()
        val started: MutableSet<String> = Collections.synchronizedSet(HashSet())
        val branchStarted = AtomicInteger()
        val g: Graph = graph("cancel-fan-out", S) {
            val entry = node("entry") { }
            val join = node("join") { bodies.track { set(S.log, listOf("join")) } }
            start(entry)
            for (i in 0 until width) {
                val branch = node("b$i") {
                    bodies.track {
                        started += "b$i"
                        branchStarted.incrementAndGet()
                        val step = state[S.plan][i]
                        val fails = step.startsWith("FAIL_")
                        perform(Kind.valueOf(step.removePrefix("FAIL_")))
                        if (fails) throw Boom("b$i")
                        set(S.log, listOf("b$i"))
                    }
                }
                entry.then(branch) { it[S.plan][i] != "" }
                branch then join
            }
            config {
                this.failFast = failFast
                if (timeoutMillis != null) executionTimeout = timeoutMillis.milliseconds
                maxNodeExecutions = 10_000
            }
        }

        fun plan(random: Random, failures: Int, kinds: List<Kind> = Stress.kinds): List<String> {
            val plan = MutableList(width) {
                if (random.nextInt(10) ==
                    0
                ) {
                    ""
                } else {
                    kinds[random.nextInt(kinds.size)].name
                }
            }
            repeat(failures) {
                val i = random.nextInt(width)
                val failKinds = listOf(Kind.QUICK, Kind.SPIN, Kind.YIELD, Kind.DELAY)
                plan[i] = "FAIL_" + failKinds[random.nextInt(failKinds.size)].name
            }
            return plan
        }

        /** What must hold after any run of this fixture that returned. */
        fun checkEnded(result: RunResult, plan: List<String>, events: List<RunEvent>?, context: String) {
            bodies.checkAllExited(context)
            check(result.executing().isEmpty()) { "$context: still EXECUTING: ${result.executing()}" }
            for (i in plan.indices) {
                val node = result.node("b$i")
                if (plan[i] == "") {
                    check(node.executions == 0 && node.status == Status.PENDING) { "$context: untaken $node" }
                } else if (node.executions == 1 && "b$i" !in started) {
                    // Begun, never started: only a cancellation may have ended it.
                    check(node.status == Status.CANCELLED) { "$context: b$i never ran but ended $node" }
                }
                check(node.executions <= 1) { "$context: $node" }
            }
            if (events != null) {
                val startedEvents = events.filterIsInstance<RunEvent.NodeStarted>().size
                val ends = events.count {
                    it is RunEvent.NodeCompleted || it is RunEvent.NodeFailed ||
                        it is RunEvent.NodeCancelled
                }
                check(startedEvents == ends) { "$context: $startedEvents NodeStarted but $ends end events" }
                check(startedEvents == result.nodes.values.sumOf { it.executions }) {
                    "$context: $startedEvents NodeStarted, but the result counts ${result.nodes.values.sumOf { it.executions }} executions"
                }
            }
        }
    }

    @Test
    fun `fail-fast with wide fan-outs leaves nothing executing and pairs every start, run after run`() {
        val fixture = Fixture(width = 64, failFast = true)
        val random = Random(5)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(250) { rep ->
                val plan = fixture.plan(random, failures = 1 + random.nextInt(3))
                context = "rep $rep, plan $plan"
                val run = fixture.g.record(stateOf(S.plan to plan))
                check(run.result.status == Status.FAILED) { "$context: ${run.result.status}" }
                check(run.result.error is Boom) { "$context: error ${run.result.error}" }
                check(run.result.node("join").status == Status.PENDING) { "$context: join ${run.result.node("join")}" }
                fixture.checkEnded(run.result, plan, run.events, context)
            }
        }
    }

    @Test
    fun `graceful failure with wide fan-outs lets the others finish, run after run`() {
        val fixture = Fixture(width = 48, failFast = false)
        val random = Random(6)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(200) { rep ->
                val plan = fixture.plan(random, failures = 1 + random.nextInt(2))
                context = "rep $rep, plan $plan"
                val run = fixture.g.record(stateOf(S.plan to plan))
                check(run.result.status == Status.FAILED) { "$context: ${run.result.status}" }
                fixture.checkEnded(run.result, plan, run.events, context)
                for (i in plan.indices) {
                    val expected = when {
                        plan[i] == "" -> Status.PENDING
                        plan[i].startsWith("FAIL_") -> Status.FAILED
                        else -> Status.COMPLETED
                    }
                    check(
                        run.result.node("b$i").status == expected,
                    ) { "$context: ${run.result.node("b$i")}, expected $expected" }
                }
            }
        }
    }

    @Test
    fun `fail-fast with a slow collector ends every run (the driver may be cancelled while it flushes)`() {
        // Two branches fail at about the same time while the event buffer is full: the node coroutine that drives the
        // scheduler may complete a failure, cancel running executions (its own among them when it was not completed
        // yet) and then suspend in the collector's backpressure.
        val fixture = Fixture(width = 96, failFast = true)
        val random = Random(8)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(150) { rep ->
                val plan = fixture.plan(
                    random,
                    failures = 2 + random.nextInt(6),
                    kinds = listOf(Kind.QUICK, Kind.SPIN, Kind.YIELD),
                )
                context = "rep $rep, plan $plan"
                val events = withTimeout(10.seconds) {
                    fixture.g.events(stateOf(S.plan to plan)).onEach {
                        if (random.nextInt(3) ==
                            0
                        ) {
                            delay(1)
                        } else {
                            yield()
                        }
                    }.toList()
                }
                EventInvariants.check(events)
                val result = events.last().terminalResult
                check(result.status == Status.FAILED) { "$context: ${result.status}" }
                fixture.checkEnded(result, plan, events, context)
            }
        }
    }

    @Test
    fun `cancelling a started run at a random moment ends it CANCELLED with every event and nothing left running`() {
        val fixture = Fixture(width = 40, failFast = false)
        val random = Random(9)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(200) { rep ->
                val plan = fixture.plan(random, failures = 0)
                context = "rep $rep, plan $plan"
                val parent = Job()
                val scope = CoroutineScope(parent + Dispatchers.Default)
                val events = Collections.synchronizedList(ArrayList<RunEvent>())
                val before = fixture.branchStarted.get()
                val handle = fixture.g.start(scope, stateOf(S.plan to plan)) { events += it }
                when (random.nextInt(4)) {
                    0 -> Unit
                    1 -> yield()
                    2 -> delay(random.nextLong(0, 3))
                    else -> {
                        val target = before + random.nextInt(1, 20)
                        val deadline = System.nanoTime() + 2_000_000_000L
                        while (fixture.branchStarted.get() < target && !handle.isDone &&
                            System.nanoTime() < deadline
                        ) {
                            yield()
                        }
                    }
                }
                handle.cancel()
                val result = handle.await()
                check(
                    result.status == Status.CANCELLED || result.status == Status.COMPLETED,
                ) { "$context: ${result.status}" }
                EventInvariants.check(events.toList())
                check(EventInvariants.isTerminal(events.last())) { "$context: last event ${events.last()}" }
                fixture.checkEnded(result, plan, events.toList(), context)
                Stress.awaitNoActiveChildren(parent)
                parent.cancel()
            }
        }
    }

    @Test
    fun `cancelling an invoke caller at a random moment rethrows, and leaves no child coroutine or running body`() {
        val fixture = Fixture(width = 40, failFast = false)
        val random = Random(10)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(200) { rep ->
                val plan = fixture.plan(random, failures = 0)
                context = "rep $rep"
                val caller = Job()
                var outcome: Throwable? = null
                val job = launch(Dispatchers.Default + caller) {
                    try {
                        fixture.g.invoke(stateOf(S.plan to plan))
                    } catch (e: Throwable) {
                        outcome = e
                        throw e
                    }
                }
                if (random.nextBoolean()) delay(random.nextLong(0, 3)) else repeat(random.nextInt(50)) { yield() }
                job.cancel()
                job.join()
                check(outcome == null || outcome is kotlinx.coroutines.CancellationException) { "$context: $outcome" }
                if (outcome != null) check(job.isCancelled) { "$context: cancelled caller not cancelled" }
                fixture.bodies.checkAllExited(context)
                Stress.awaitNoActiveChildren(caller)
                caller.cancel()
            }
        }
    }

    @Test
    fun `a collector that stops early cancels the run, leaving nothing running`() {
        val fixture = Fixture(width = 40, failFast = false)
        val random = Random(12)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(200) { rep ->
                val plan = fixture.plan(random, failures = random.nextInt(2))
                val count = random.nextInt(1, 60)
                context = "rep $rep, take $count"
                val events = fixture.g.events(stateOf(S.plan to plan)).take(count).toList()
                EventInvariants.check(events, complete = false)
                fixture.bodies.checkAllExited(context)
            }
        }
    }

    @Test
    fun `run timeouts at random moments end FAILED with every start paired`() {
        val random = Random(13)
        var context = ""
        Stress.deadline(what = { context }) {
            for (timeout in listOf(1L, 2L, 3L, 5L)) {
                val fixture = Fixture(width = 40, failFast = false, timeoutMillis = timeout)
                repeat(40) { rep ->
                    val plan = fixture.plan(
                        random,
                        failures = 0,
                        kinds = listOf(Kind.QUICK, Kind.SPIN, Kind.DELAY, Kind.LONG_SPIN, Kind.YIELD),
                    )
                    context = "timeout $timeout ms, rep $rep, plan $plan"
                    val run = fixture.g.record(stateOf(S.plan to plan))
                    val result = run.result
                    check(
                        result.status == Status.FAILED || result.status == Status.COMPLETED,
                    ) { "$context: ${result.status}" }
                    if (result.status ==
                        Status.FAILED
                    ) {
                        check(result.error is RunTimeoutException) { "$context: ${result.error}" }
                    }
                    fixture.checkEnded(result, plan, run.events, context)
                }
            }
        }
    }

    @Test
    fun `draining at a random moment ends the run INTERRUPTED or COMPLETED with every start paired`() {
        val fixture = Fixture(width = 40, failFast = false)
        val random = Random(14)
        var context = ""
        Stress.deadline(what = { context }) {
            repeat(150) { rep ->
                val plan = fixture.plan(random, failures = 0)
                context = "rep $rep"
                val control = RunControl()
                val events = Collections.synchronizedList(ArrayList<RunEvent>())
                val runner = launch(Dispatchers.Default) {
                    fixture.g.events(stateOf(S.plan to plan), RunOptions(control = control)).toList(events)
                }
                if (random.nextBoolean()) delay(random.nextLong(0, 2)) else repeat(random.nextInt(30)) { yield() }
                control.drain()
                runner.join()
                // EventInvariants counts RunInterrupted as no terminal event: check pairing with complete = false, and the
                // ends of every started execution through checkEnded's counts.
                EventInvariants.check(events.toList(), complete = false)
                val last = events.last()
                val result = when (last) {
                    is RunEvent.RunInterrupted -> last.result
                    is RunEvent.RunCompleted -> last.result
                    else -> error("$context: last event $last")
                }
                check(
                    result.status == Status.INTERRUPTED || result.status == Status.COMPLETED,
                ) { "$context: ${result.status}" }
                fixture.checkEnded(result, plan, events.toList(), context)
            }
        }
    }

    @Test
    fun `checkpointing every step from node coroutines, with fail-fast, ends every run`() {
        val random = Random(15)
        var context = ""
        Stress.deadline(what = { context }) {
            for (failFast in listOf(true, false)) {
                val fixture = Fixture(width = 32, failFast = failFast)
                repeat(60) { rep ->
                    val plan = fixture.plan(random, failures = random.nextInt(2))
                    context = "failFast $failFast, rep $rep, plan $plan"
                    val store = InMemoryCheckpointStore()
                    val options = RunOptions(runId = "cp-$failFast-$rep", checkpointing = Checkpointing(store))
                    val run = fixture.g.record(stateOf(S.plan to plan), options)
                    val failed = plan.any { it.startsWith("FAIL_") }
                    val expected = if (failed) Status.FAILED else Status.COMPLETED
                    check(
                        run.result.status == expected,
                    ) { "$context: ${run.result.status}, errors ${run.result.errors}" }
                    fixture.checkEnded(run.result, plan, run.events, context)
                    val saved = run.all<RunEvent.CheckpointSaved>().map { it.checkpoint }
                    check(saved == (1L..saved.size).toList()) { "$context: checkpoint sequences $saved" }
                }
            }
        }
    }
}
