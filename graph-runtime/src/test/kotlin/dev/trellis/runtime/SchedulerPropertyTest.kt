package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.TaskError
import dev.trellis.graph.TaskFailure
import dev.trellis.graph.graph
import dev.trellis.runtime.reference.EdgeSpec
import dev.trellis.runtime.reference.GraphSpec
import dev.trellis.runtime.reference.NodeKind
import dev.trellis.runtime.reference.ReferenceInterpreter
import dev.trellis.runtime.reference.wire
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.property.PropTestConfig
import io.kotest.property.checkAll
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds

/**
 * The engine against [ReferenceInterpreter] on random graphs, each re-timed many times (`docs/semantics.md` §5
 * "Determinism"). `-Dtrellis.nightly=true` runs thousands of graphs instead of hundreds.
 */
class SchedulerPropertyTest {
    object P : StateSchema("property") {
        val counters: List<StateKey<Int>> = List(10) { key("c$it", default = 0) }
        val sum = key("sum", default = 0, reducer = Reducer.sum())
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val errors = key("errors", default = emptyList<TaskError>(), reducer = Reducer.append())

        /** The item of a map task's child run. */
        val item = key("item", default = -1)

        /** `items[k]` is the list `0 until k`, mapped over by a map node of k items. */
        val items: List<StateKey<List<Int>>> =
            List(GraphSpec.MAX_ITEMS + 1) { k -> key("items$k", default = List(k) { it }) }
    }

    /** A failure for good, by the label of the node or task that failed (`n3#2`, `n3#2[1]`). */
    class Boom(val label: String) : RuntimeException(label)

    class Flaky(node: Int) : RuntimeException("node $node fails this attempt")

    private val nightly = System.getProperty("trellis.nightly").toBoolean()
    private val graphs = if (nightly) 2_000 else 250
    private val retimings = if (nightly) 30 else 20
    private val compositeGraphs = if (nightly) 1_000 else 40
    private val compositeRetimings = if (nightly) 20 else 5

    private fun retryOf(flaky: Int): Retry? =
        if (flaky == 0) null else Retry.fixed(flaky + 1, GraphSpec.RETRY_DELAY.milliseconds).retryOn { it is Flaky }

    /** Writes a child run's labels, sum and collected failures as this node's or task's, under [prefix]. */
    private fun NodeScope.absorb(prefix: String, child: State) {
        set(P.log, child[P.log].map { prefix + it })
        set(P.sum, child[P.sum])
        set(P.errors, child[P.errors].map { TaskError(it.index, Boom::class.java.name, prefix + labelOf(it)) })
    }

    /** The label of a collected task failure (a child run's limit is `limit`). */
    private fun labelOf(error: TaskError): String = when (error.type) {
        Boom::class.java.name -> error.message!!
        LimitExceededException::class.java.name -> "limit"
        else -> "unexpected $error"
    }

    private fun GraphSpec.toGraph(delays: Boolean, name: String = "random"): Graph {
        val spec = this
        val childGraphs = spec.kinds.mapIndexed { i, kind ->
            when (kind) {
                is NodeKind.Sub -> kind.child.toGraph(delays, "$name-n$i")
                is NodeKind.MapOf -> kind.child?.toGraph(delays, "$name-n$i")
                NodeKind.Plain -> null
            }
        }
        return graph(name, P) {
            val refs = (0 until spec.size).map { i ->
                val flaky = spec.flaky[i]
                val retry = retryOf(flaky)
                when (val kind = spec.kinds[i]) {
                    NodeKind.Plain -> node("n$i", retry = retry) {
                        if (delays) delay(spec.duration(i, executionCount).toLong())
                        if (attempt <= flaky) throw Flaky(i)
                        if (executionCount == spec.failAt[i]) throw Boom("n$i#$executionCount")
                        set(P.counters[i], executionCount)
                        set(P.sum, i + 1)
                        set(P.log, listOf("n$i#$executionCount"))
                    }
                    is NodeKind.Sub -> subgraph("n$i", childGraphs[i]!!, retry = retry) {
                        output { child ->
                            if (attempt <= flaky) throw Flaky(i)
                            val label = "n$i#$executionCount"
                            if (executionCount == spec.failAt[i]) throw Boom(label)
                            set(P.counters[i], executionCount)
                            absorb("$label/", child)
                            set(P.sum, i + 1)
                            set(P.log, listOf(label))
                        }
                    }
                    is NodeKind.MapOf -> {
                        val policy = if (kind.collect) TaskFailure.COLLECT else TaskFailure.FAIL_FAST
                        val errors = if (kind.collect) P.errors else null
                        val over = P.items[kind.items]
                        val childGraph = childGraphs[i]
                        if (childGraph == null) {
                            map("n$i", over, kind.maxConcurrency, policy, errors, retry = retry) { item ->
                                if (delays) delay(kind.taskDurations[item].toLong())
                                if (attempt <= flaky) throw Flaky(i)
                                val label = "n$i#$executionCount[$item]"
                                if (executionCount == kind.taskFailAt[item]) throw Boom(label)
                                set(P.sum, i + 1)
                                set(P.log, listOf(label))
                            }
                        } else {
                            map("n$i", over, childGraph, kind.maxConcurrency, policy, errors, retry = retry) {
                                input { set(P.item, item) }
                                output { child ->
                                    if (attempt <= flaky) throw Flaky(i)
                                    val label = "n$i#$executionCount[${child[P.item]}]"
                                    if (executionCount == kind.taskFailAt[child[P.item]]) throw Boom(label)
                                    absorb("$label/", child)
                                    set(P.sum, i + 1)
                                    set(P.log, listOf(label))
                                }
                            }
                        }
                    }
                }
            }

            wire(spec, refs, P.counters)
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
        is Boom -> e.label
        is LimitExceededException -> "limit".also { e.limit shouldBe "maxNodeExecutions" }
        else -> "unexpected $e"
    }

    private fun compare(expected: ReferenceInterpreter.Outcome, actual: RunResult, spec: GraphSpec, whatFor: String) {
        withClue("$whatFor\n$spec\nreference: $expected\nengine: $actual\n${actual.nodes.values.joinToString("\n")}") {
            actual.status shouldBe expected.status
            // A failed run with waits ending at the same instant: how far the others got depends on the order in which the
            // virtual-time dispatcher resumes them, which the contract leaves open (§5 "Determinism").
            if (expected.status == Status.FAILED && expected.tied) return@withClue
            errorOf(actual) shouldBe expected.error
            (0 until spec.size).map { actual.node("n$it").status } shouldBe expected.statuses
            (0 until spec.size).map { actual.node("n$it").executions } shouldBe expected.counts
            (0 until spec.size).map { actual.node("n$it").attempts } shouldBe expected.attempts
            actual.state[P.sum] shouldBe expected.sum
            actual.state[P.log].sorted() shouldBe expected.log
            actual.state[P.errors].map(::labelOf).sorted() shouldBe expected.errors
            checkTaskOrder(actual.state[P.log])
            (0 until spec.size).map { actual.state[P.counters[it]] } shouldBe
                (0 until spec.size).map { i ->
                    if (spec.kinds[i] is NodeKind.MapOf) {
                        0
                    } else if (expected.statuses[i] ==
                        Status.COMPLETED
                    ) {
                        expected.counts[i]
                    } else {
                        actual.state[P.counters[i]]
                    }
                }
            if (expected.status == Status.COMPLETED) {
                expected.tokensLeft shouldBe 0
                actual.nodes.values.forEach { it.status shouldNotBe Status.EXECUTING }
                compareChildren(expected, actual, spec, "")
            }
        }
    }

    /**
     * The last child run of every subgraph node that ran, and of every task of a map whose tasks are child runs, has
     * the counts of the reference's run of the child spec (each child run starts from the same input), recursively.
     */
    private fun compareChildren(
        expected: ReferenceInterpreter.Outcome,
        actual: RunResult,
        spec: GraphSpec,
        path: String,
    ) {
        for ((i, kind) in spec.kinds.withIndex()) {
            if (expected.counts[i] == 0) continue
            val child = expected.children[i] ?: continue
            val childSpec = when (kind) {
                is NodeKind.Sub -> kind.child
                is NodeKind.MapOf -> kind.child!!
                NodeKind.Plain -> continue
            }
            val paths = if (kind is NodeKind.MapOf) List(kind.items) { "n$i[$it]" } else listOf("n$i")
            for (p in paths) {
                // A child run's own children are keyed by their paths in the whole run (`n3/n1`), like its events.
                val result = actual.children["$path$p"]
                    ?: error("no child run at $path$p; there are ${actual.children.keys}")
                actual.child("$path$p") shouldBe result
                withClue("child run $path$p") {
                    result.status shouldBe child.status
                    (0 until childSpec.size).map { result.nodes["n$it"]?.executions ?: 0 } shouldBe child.counts
                    if (child.status == Status.COMPLETED) compareChildren(child, result, childSpec, "$path$p/")
                }
            }
        }
    }

    /**
     * A map's writes are its tasks' in task order (`docs/semantics.md` §11): in the final log, the labels written by
     * the tasks of one map execution (`n3#2[k]`, `n3#2[k]/…`) come in increasing task index `k`.
     */
    private fun checkTaskOrder(log: List<String>) {
        val last = HashMap<String, Int>()
        for (label in log) {
            var from = 0
            while (true) {
                val open = label.indexOf('[', from)
                if (open < 0) break
                val close = label.indexOf(']', open)
                val index = label.substring(open + 1, close).toInt()
                val map = label.substring(0, open)
                val before = last.put(map, index) ?: -1
                withClue("log $log: task $index of $map after task $before") { (index >= before) shouldBe true }
                from = close
            }
        }
    }

    /** The reference's outcome of [spec], after checking that the engine reaches exactly it in virtual time. */
    private fun checked(spec: GraphSpec, whatFor: String): ReferenceInterpreter.Outcome {
        val expected = ReferenceInterpreter.run(spec)
        compare(expected, runVirtual(spec).result, spec, whatFor)
        return expected
    }

    /**
     * What must not change when [retimed] is [original] with other durations: a completed run completes with the
     * same counts, statuses, attempts and (commutative) state; a failed run fails.
     */
    private fun sameOutcome(original: ReferenceInterpreter.Outcome, retimed: ReferenceInterpreter.Outcome): Boolean =
        if (original.status == Status.COMPLETED ||
            retimed.status == Status.COMPLETED
        ) {
            original.plan == retimed.plan
        } else {
            original.status == retimed.status
        }

    /**
     * Checks [spec] on the engine against the reference with its own durations and [timings] re-timings, and that no
     * re-timing changes the outcome. Returns the reference's outcome with the spec's own durations.
     */
    private fun property(spec: GraphSpec, timings: Int): ReferenceInterpreter.Outcome {
        val random = Random(spec.toString().hashCode())
        val original = checked(spec, "original durations")
        repeat(timings) { round ->
            val retimed = spec.withDurations(random)
            val outcome = checked(retimed, "re-timing $round")
            withClue("durations changed the outcome of\n$spec\nre-timed as\n$retimed\n$original\n$outcome") {
                sameOutcome(original, outcome) shouldBe true
            }
        }
        return original
    }

    @Test
    fun `the engine matches the reference in virtual time, and re-timing a graph never changes its outcome`() = runBlocking {
        var completed = 0
        var withFallback = 0
        var cyclic = 0
        checkAll(PropTestConfig(seed = 7, iterations = graphs), GraphSpec.arb()) { spec ->
            val original = property(spec, retimings)
            if (original.status == Status.COMPLETED) completed++
            if (original.fallbacks > 0) withFallback++
            if (!spec.isDag) cyclic++
            // In a DAG whose only entry has no predecessor, every node runs at most once.
            if (spec.isDag && spec.entries == listOf(0)) original.counts.all { it <= 1 } shouldBe true
        }
        println(
            "SchedulerPropertyTest: $graphs graphs x ${retimings + 1} timings; $completed completed, $cyclic cyclic, $withFallback used the fallback",
        )
        (completed > graphs / 4) shouldBe true
        (cyclic > graphs / 4) shouldBe true
        Unit
    }

    /** What the composite property's graphs contain, counted over the nodes that ran, at any depth. */
    private class Coverage {
        var subgraphs = 0
        var nested = 0
        var maps = 0
        var emptyMaps = 0
        var oneAtATime = 0
        var collecting = 0
        var childTasks = 0
        var failedTasks = 0

        fun add(spec: GraphSpec, outcome: ReferenceInterpreter.Outcome, depth: Int = 0) {
            for ((i, kind) in spec.kinds.withIndex()) {
                if (outcome.counts[i] == 0) continue
                val child = outcome.children[i]
                when (kind) {
                    is NodeKind.Sub -> {
                        subgraphs++
                        if (depth > 0) nested++
                    }
                    is NodeKind.MapOf -> {
                        maps++
                        if (kind.items == 0) emptyMaps++
                        if (kind.maxConcurrency == 1 && kind.items > 1) oneAtATime++
                        if (kind.collect) collecting++
                        if (kind.child != null) childTasks++
                        if (kind.taskFailAt.any { it in 1..outcome.counts[i] }) failedTasks++
                    }
                    NodeKind.Plain -> Unit
                }
                val childSpec = (kind as? NodeKind.Sub)?.child ?: (kind as? NodeKind.MapOf)?.child
                if (child != null && childSpec != null) add(childSpec, child, depth + 1)
            }
        }

        override fun toString(): String =
            "$subgraphs subgraph nodes ($nested nested), $maps map nodes ($emptyMaps empty, " +
                "$oneAtATime one task at a time, $collecting collecting failures, $childTasks with child-run tasks, $failedTasks with failing tasks)"
    }

    @Test
    fun `with subgraph and map nodes, the engine matches the reference, whatever the durations`() = runBlocking {
        var completed = 0
        val coverage = Coverage()
        val started = System.nanoTime()
        checkAll(PropTestConfig(seed = 11, iterations = compositeGraphs), GraphSpec.arb(depth = 2)) { spec ->
            val original = property(spec, compositeRetimings)
            if (original.status == Status.COMPLETED) completed++
            coverage.add(spec, original)
        }
        val seconds = (System.nanoTime() - started) / 1_000_000_000.0
        println(
            "SchedulerPropertyTest: $compositeGraphs composite graphs x ${compositeRetimings + 1} timings in " +
                "%.1f s; $completed completed; $coverage".format(seconds),
        )
        (completed > compositeGraphs / 5) shouldBe true
        (coverage.nested > 0 && coverage.emptyMaps > 0 && coverage.oneAtATime > 0 && coverage.childTasks > 0) shouldBe
            true
        (coverage.collecting > 0 && coverage.failedTasks > 0) shouldBe true
        Unit
    }

    @Test
    fun `the re-timing check catches a rule whose counts depend on durations`() {
        // The same check run against a mutant of the rule in which a channel holds at most one token (a second trigger
        // from the same source falls together with the first, as the first release did): it must find graphs whose
        // counts change with durations, or the check above proves nothing.
        val random = Random(5)
        // The determinism issue's repro: plan -> notify, plan -> act while plan ran fewer than 3 times, act -> plan.
        val repro = GraphSpec(
            size = 3,
            entries = listOf(0),
            edges = listOf(EdgeSpec.Plain(0, 1), EdgeSpec.Conditional(0, 2, below = 3), EdgeSpec.Plain(2, 0)),
            durations = listOf(listOf(9), listOf(2), listOf(7)),
            failAt = List(3) { 0 },
            maxConcurrency = Int.MAX_VALUE,
            maxNodeExecutions = 200,
        )
        val slowNotify = repro.copy(durations = listOf(listOf(1), listOf(6), listOf(1)))
        ReferenceInterpreter.run(repro, coalesce = true).counts[1] shouldBe 3
        ReferenceInterpreter.run(slowNotify, coalesce = true).counts[1] shouldBe 2
        ReferenceInterpreter.run(repro).counts shouldBe listOf(3, 3, 2)
        ReferenceInterpreter.run(slowNotify).counts shouldBe listOf(3, 3, 2)
        var dependent = 0
        repeat(300) {
            val spec = GraphSpec.generate(random, failures = false)
            val original = ReferenceInterpreter.run(spec, coalesce = true)
            if (List(retimings) {
                    ReferenceInterpreter.run(spec.withDurations(random), coalesce = true)
                }.any { !sameOutcome(original, it) }
            ) {
                dependent++
            }
        }
        println("SchedulerPropertyTest: the coalescing mutant is timing-dependent on $dependent of 300 graphs")
        (dependent > 0) shouldBe true
    }

    @Test
    fun `the composite check catches a map that triggers its successors once per task`() {
        // The engine against a mutant of §11's join (a map triggers its successors per task): the comparison must tell
        // them apart on random graphs with maps of other than one item, or the property above proves nothing.
        val random = Random(13)
        var tried = 0
        var caught = 0
        while (tried < 40) {
            val spec = GraphSpec.generate(random, failures = false, depth = 1)
            if (spec.kinds.none { it is NodeKind.MapOf && it.items != 1 }) continue
            tried++
            val mutant = ReferenceInterpreter.run(spec, perTaskJoin = true)
            val engine = runVirtual(spec).result
            if (runCatching { compare(mutant, engine, spec, "mutant") }.isFailure) caught++
        }
        println("SchedulerPropertyTest: the per-task-join mutant differs from the engine on $caught of $tried graphs")
        (caught > tried / 4) shouldBe true
    }

    @Test
    fun `on real threads the engine reaches the reference's outcome`() {
        val random = Random(99)
        var checked = 0
        runBlocking {
            repeat(300) {
                val generated = GraphSpec.generate(random, failures = false)
                val spec = generated.copy(flaky = List(generated.size) { 0 })
                val expected = ReferenceInterpreter.run(spec)
                if (expected.status != Status.COMPLETED) return@repeat
                val graph = spec.toGraph(delays = false)
                repeat(3) {
                    val run = graph.record(options = RunOptions(dispatcher = Dispatchers.Default))
                    compare(expected, run.result, spec, "real threads")
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
    fun `two nodes of a cycle that wait for each other fall back to the one declared first, whatever finishes first`() {
        // s -> P -> A, s -> Q -> B, A -> B, B -> A while B's count < 1. A waits for B's channel (Q feeds it) and B for
        // A's (P feeds it); once both hold a token nothing runs, and the fallback picks A, declared first.
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
        for ((p, q) in listOf(1 to 5, 5 to 1, 3 to 3)) {
            val expected = checked(spec(p, q), "P takes $p, Q takes $q")
            expected.counts shouldBe listOf(1, 1, 1, 1, 1)
            expected.fallbacks shouldBe 1
        }
    }
}
