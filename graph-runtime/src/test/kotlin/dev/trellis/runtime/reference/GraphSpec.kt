package dev.trellis.runtime.reference

import io.kotest.property.Arb
import io.kotest.property.arbitrary.arbitrary
import kotlin.random.Random

/**
 * A random graph for the property tests: nodes `0 until size` (node `i` is called `n<i>`), edges, the
 * duration of each attempt, how many attempts of each execution fail and are retried, and the execution at
 * which a node fails for good.
 *
 * Node `i` writes, on each successful execution: its own counter `c<i>` = its execution count, `i + 1`
 * to a sum-reducer key and `i` to an append-reducer key. Conditions and selectors read only the
 * deciding node's own counter, so they do not depend on timing.
 */
class GraphSpec(
    val size: Int,
    val entries: List<Int>,
    val edges: List<EdgeSpec>,
    /** Per node, the durations of its executions, used in turn. */
    val durations: List<List<Int>>,
    /** Per node, the execution number that fails (0: none). */
    val failAt: List<Int>,
    val maxConcurrency: Int,
    val maxNodeExecutions: Int,
    /** Per node, how many attempts of every execution fail and are retried (after [RETRY_DELAY]) before the last one. */
    val flaky: List<Int> = List(size) { 0 },
    /** Per node, what it is: a plain node, a subgraph node or a map node ([NodeKind]). */
    val kinds: List<NodeKind> = List(size) { NodeKind.Plain },
) {
    /** The duration of each attempt of [execution] of [node]. */
    fun duration(node: Int, execution: Int): Int = durations[node][(execution - 1) % durations[node].size]

    val isDag: Boolean get() = edges.all { e -> e.targets.all { it < 0 || it > e.from } }

    fun copy(
        edges: List<EdgeSpec> = this.edges,
        durations: List<List<Int>> = this.durations,
        failAt: List<Int> = this.failAt,
        maxConcurrency: Int = this.maxConcurrency,
        flaky: List<Int> = this.flaky,
        kinds: List<NodeKind> = this.kinds,
    ): GraphSpec = GraphSpec(size, entries, edges, durations, failAt, maxConcurrency, maxNodeExecutions, flaky, kinds)

    /** The same graph with new durations (a re-timing), inside child graphs and map tasks too. */
    fun withDurations(random: Random): GraphSpec =
        copy(durations = List(size) { randomDurations(random) }, kinds = kinds.map { it.retimed(random) })

    /** Whether a node is a subgraph or map node, at any depth. */
    val hasComposites: Boolean get() = kinds.any { it != NodeKind.Plain }

    fun withoutFailures(): GraphSpec = copy(failAt = List(size) { 0 })

    /** Whether every node is reachable from the entries (what `build()` requires). */
    val isValid: Boolean get() = reachable(size, entries, edges).size == size

    override fun toString(): String =
        "GraphSpec(size=$size, entries=$entries, maxConcurrency=$maxConcurrency, " +
            "maxNodeExecutions=$maxNodeExecutions,\n" +
            "  edges=$edges,\n  durations=$durations,\n  failAt=$failAt, flaky=$flaky" +
            kinds.withIndex().filter { it.value != NodeKind.Plain }
                .joinToString("") { (i, k) -> ",\n  n$i=" + k.toString().replace("\n", "\n    ") } + ")"

    companion object {
        /** The delay before a retried attempt (virtual ms). */
        const val RETRY_DELAY: Long = 3

        fun randomDurations(random: Random): List<Int> = List(3) { random.nextInt(1, 20) }

        /**
         * A random graph of 2 until [maxSize] nodes. With [depth] > 0, some nodes become subgraph nodes (whose child is
         * a random graph of depth - 1) or map nodes (whose tasks are bodies or, when [depth] > 0, random child graphs);
         * the draws for the flat graph are the same as without composites.
         */
        fun generate(
            random: Random,
            maxNodeExecutions: Int = 200,
            failures: Boolean = true,
            depth: Int = 0,
            maxSize: Int = 11,
        ): GraphSpec {
            // With composites, failures anywhere fail most runs: only some graphs have them at the top level.
            val failing = failures && (depth <= 0 || random.nextInt(3) == 0)
            val flat = generateFlat(random, maxNodeExecutions, failing, maxSize)
            if (depth <= 0) return flat
            return withComposites(flat, random, failures, depth)
        }

        private fun child(random: Random, failures: Boolean, depth: Int): GraphSpec =
            generate(random, maxNodeExecutions = 40, failures = failures && random.nextInt(5) == 0, depth, maxSize = 5)

        private fun withComposites(flat: GraphSpec, random: Random, failures: Boolean, depth: Int): GraphSpec {
            val kinds = MutableList<NodeKind>(flat.size) { NodeKind.Plain }
            for (i in 0 until flat.size) {
                kinds[i] = when (random.nextInt(8)) {
                    0, 1 -> NodeKind.Sub(child(random, failures, depth - 1))
                    2, 3, 4 -> {
                        val items = random.nextInt(0, MAX_ITEMS + 1)
                        NodeKind.MapOf(
                            items = items,
                            maxConcurrency = listOf(1, 1, 2, 3, Int.MAX_VALUE).random(random),
                            collect = random.nextBoolean(),
                            taskDurations = List(items) { random.nextInt(1, 20) },
                            taskFailAt = List(items) { taskFailure(random, failures) },
                            child = if (random.nextInt(3) == 0) child(random, failures, depth - 1) else null,
                        )
                    }
                    else -> NodeKind.Plain
                }
            }
            // A map node writes no counter of its own (its tasks write), so its edges are plain; its own failures are
            // its tasks'.
            val edges = flat.edges.flatMap { e ->
                if (kinds[e.from] !is NodeKind.MapOf) {
                    listOf(e)
                } else {
                    e.targets.filter { it >= 0 }.distinct().map { EdgeSpec.Plain(e.from, it) }
                }
            }.distinctBy { it.toString() }
            val failAt = flat.failAt.mapIndexed { i, f -> if (kinds[i] is NodeKind.MapOf) 0 else f }
            return flat.copy(edges = edges, failAt = failAt, kinds = kinds)
        }

        private fun taskFailure(random: Random, failures: Boolean): Int =
            if (failures && random.nextInt(12) == 0) random.nextInt(1, 3) else 0

        /** The most items a generated map node maps over (the schema has a key per count). */
        const val MAX_ITEMS: Int = 6

        private fun generateFlat(random: Random, maxNodeExecutions: Int, failures: Boolean, maxSize: Int): GraphSpec {
            val n = random.nextInt(2, maxSize)
            val dag = random.nextBoolean()
            val edges = ArrayList<EdgeSpec>()
            val plain = HashSet<Pair<Int, Int>>()

            fun target(from: Int): Int? = if (!dag) {
                random.nextInt(n)
            } else if (from + 1 <
                n
            ) {
                random.nextInt(from + 1, n)
            } else {
                null
            }
            repeat(random.nextInt(n - 1, 3 * n)) {
                val from = random.nextInt(n)
                val kind = random.nextInt(10)
                when {
                    kind < 5 -> target(from)?.let { if (plain.add(from to it)) edges += EdgeSpec.Plain(from, it) }
                    kind < 8 -> target(from)?.let {
                        edges += EdgeSpec.Conditional(from, it, listOf(0, 1, 2, 3, Int.MAX_VALUE).random(random))
                    }
                    else -> {
                        val targets = (
                            List(random.nextInt(1, 4)) { target(from) ?: -1 } +
                                listOfNotNull(if (random.nextBoolean()) -1 else null)
                        )
                            .distinct()
                        edges +=
                            EdgeSpec.Route(
                                from,
                                targets,
                                random.nextInt(0, 4),
                                random.nextInt(targets.size),
                                random.nextInt(targets.size),
                            )
                    }
                }
            }
            // Every node must be reachable from node 0: link each unreachable node from an earlier one.
            for (j in 1 until n) {
                if (j !in reachable(n, listOf(0), edges)) {
                    val from = random.nextInt(j)
                    plain += from to j
                    edges += EdgeSpec.Plain(from, j)
                }
            }
            val entries = if (random.nextInt(4) == 0) listOf(0, random.nextInt(n)).distinct() else listOf(0)
            return GraphSpec(
                size = n,
                entries = entries,
                edges = edges,
                durations = List(n) { randomDurations(random) },
                failAt = List(n) { if (failures && random.nextInt(7) == 0) random.nextInt(1, 4) else 0 },
                maxConcurrency = listOf(1, 2, Int.MAX_VALUE, Int.MAX_VALUE, Int.MAX_VALUE).random(random),
                maxNodeExecutions = maxNodeExecutions,
                flaky = List(n) { if (random.nextInt(5) == 0) random.nextInt(1, 3) else 0 },
            )
        }

        internal fun reachable(n: Int, from: List<Int>, edges: List<EdgeSpec>): Set<Int> {
            val seen = from.toMutableSet()
            val stack = ArrayDeque(from)
            while (stack.isNotEmpty()) {
                val m = stack.removeLast()
                for (e in edges) {
                    if (e.from ==
                        m
                    ) {
                        for (t in e.targets) if (t in 0 until n && seen.add(t)) stack.addLast(t)
                    }
                }
            }
            return seen
        }

        /** Random graphs of 2–10 nodes, DAGs and cyclic graphs alike, shrunk by [GraphSpecShrinker] when a check fails. */
        fun arb(maxNodeExecutions: Int = 200, failures: Boolean = true, depth: Int = 0): Arb<GraphSpec> =
            arbitrary(GraphSpecShrinker) { rs -> generate(rs.random, maxNodeExecutions, failures, depth) }
    }
}

/** What a node of a [GraphSpec] is (`docs/semantics.md` §11). */
sealed class NodeKind {
    abstract fun retimed(random: Random): NodeKind

    /** A plain node: its durations, retries and failure are the spec's. */
    object Plain : NodeKind() {
        override fun retimed(random: Random): NodeKind = this

        override fun toString(): String = "plain"
    }

    /**
     * A subgraph node: each attempt is a child run of [child]; the spec's retries and failure apply to the node
     * (its output mapping throws), and the child run's own failures fail the attempt.
     */
    class Sub(val child: GraphSpec) : NodeKind() {
        override fun retimed(random: Random): NodeKind = Sub(child.withDurations(random))

        override fun toString(): String = "subgraph of $child"
    }

    /**
     * A map node over [items] items, at most [maxConcurrency] tasks at once. Task `k` takes `taskDurations[k]` per
     * attempt (or, with a [child], a child run of it), fails the spec's `flaky` attempts (retried by the map node's
     * retry policy), and fails for good in execution `taskFailAt[k]` of the map (0: never). [collect]:
     * `TaskFailure.COLLECT`, else fail-fast.
     */
    class MapOf(
        val items: Int,
        val maxConcurrency: Int,
        val collect: Boolean,
        val taskDurations: List<Int>,
        val taskFailAt: List<Int>,
        val child: GraphSpec?,
    ) : NodeKind() {
        override fun retimed(random: Random): NodeKind =
            MapOf(
                items,
                maxConcurrency,
                collect,
                List(items) { random.nextInt(1, 20) },
                taskFailAt,
                child?.withDurations(random),
            )

        fun simplified(): MapOf = MapOf(items, Int.MAX_VALUE, collect, taskDurations, List(items) { 0 }, child)

        override fun toString(): String =
            "map(items=$items, maxConcurrency=$maxConcurrency, collect=$collect, taskDurations=$taskDurations, " +
                "taskFailAt=$taskFailAt" + (child?.let { ", child=$it" } ?: "") + ")"
    }
}

/** An edge of a [GraphSpec]; targets are node indices, -1 is END. */
sealed class EdgeSpec {
    abstract val from: Int
    abstract val targets: List<Int>

    /** The targets taken after an execution of [from] that left its counter at [count]. */
    abstract fun decide(count: Int): List<Int>

    class Plain(override val from: Int, val to: Int) : EdgeSpec() {
        override val targets: List<Int> get() = listOf(to)

        override fun decide(count: Int): List<Int> = listOf(to)

        override fun toString(): String = "$from->$to"
    }

    /** Taken while the deciding node's count is below [below]. */
    class Conditional(override val from: Int, val to: Int, val below: Int) : EdgeSpec() {
        override val targets: List<Int> get() = listOf(to)

        override fun decide(count: Int): List<Int> = if (count < below) listOf(to) else emptyList()

        override fun toString(): String = "$from-?->$to(count<$below)"
    }

    /** Selects `targets[first]` while the deciding node's count is below [below], else `targets[otherwise]`. */
    class Route(
        override val from: Int,
        override val targets: List<Int>,
        val below: Int,
        val first: Int,
        val otherwise: Int,
    ) : EdgeSpec() {
        fun select(count: Int): Int = if (count < below) targets[first] else targets[otherwise]

        override fun decide(count: Int): List<Int> = listOf(select(count))

        override fun toString(): String = "$from=>$targets(count<$below ? ${targets[first]} : ${targets[otherwise]})"
    }
}
