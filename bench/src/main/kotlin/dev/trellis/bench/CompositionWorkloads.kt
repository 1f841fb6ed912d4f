package dev.trellis.bench

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.RunResult
import kotlinx.coroutines.delay

/** The state of the map workloads: the items to map over and a total the tasks add to. */
public object MapState : StateSchema("bench-map") {
    /** The list a map node runs one task per item of. */
    public val items: StateKey<List<Int>> = key("items", default = emptyList())

    /** Each task adds its item (a summing reducer, so tasks never conflict). */
    public val total: StateKey<Int> = key("total", default = 0, reducer = Reducer.sum())
}

/** The composition workloads (`docs/semantics.md` §11): subgraph nodes and map nodes, against flat twins. */
public object CompositionWorkloads {
    /** Number of tasks of the trivial map workload. */
    public const val MAP_TASKS: Int = 1000

    /** Number of tasks of the sleeping map workload. */
    public const val SLEEP_TASKS: Int = 64

    /** How long each task of the sleeping map workload waits, in milliseconds. */
    public const val SLEEP_MILLIS: Long = 100

    /** Number of iterations of the loop workloads. */
    public const val LOOP: Int = 100

    /** A parent of one subgraph node whose child is [child], mapping the counter in and out. */
    private fun wrap(id: String, child: Graph): Graph = graph(id, BenchState) {
        start(
            subgraph("sub", child) {
                input(BenchState.n, BenchState.n)
                output(BenchState.n, BenchState.n)
            },
        )
    }

    /** A subgraph node whose child is one node incrementing the counter: compare with `TrellisWorkloads.oneNode`. */
    public fun subgraphOne(): Graph = wrap("subgraph-one", TrellisWorkloads.oneNode())

    /**
     * A subgraph node running a one-node child, routed back to itself [iterations] times: compare with
     * `TrellisWorkloads.loop` (the same loop of plain nodes); the difference per iteration is the cost of a subgraph
     * call beyond its child's node step.
     */
    public fun subgraphLoop(iterations: Int = LOOP): Graph = graph("subgraph-loop-$iterations", BenchState) {
        val step = subgraph("step", TrellisWorkloads.oneNode()) {
            input(BenchState.n, BenchState.n)
            output(BenchState.n, BenchState.n)
        }
        start(step)
        step.route(step, END) { if (it[BenchState.n] < iterations) step else END }
        config { maxNodeExecutions = iterations }
    }

    /** A chain of [count] subgraph nodes, each a chain of [length] counting nodes: compare with a flat chain. */
    public fun subgraphChain(count: Int = 10, length: Int = 10): Graph = graph("sub-chain-$count-$length", BenchState) {
        val child = TrellisWorkloads.chain(length)
        val nodes = (0 until count).map { i ->
            subgraph("s$i", child) {
                input(BenchState.n, BenchState.n)
                output(BenchState.n, BenchState.n)
            }
        }
        start(nodes[0])
        for (i in 1 until count) nodes[i - 1] then nodes[i]
    }

    /** A map node of one trivial task per item, each adding its item to the total. */
    public fun map(): Graph = graph("map", MapState) {
        start(map("add", over = MapState.items) { item -> set(MapState.total, item) })
    }

    /** A map node of tasks that each `delay` [SLEEP_MILLIS] ms, all at once (maxConcurrency = [SLEEP_TASKS]). */
    public fun sleepingMap(): Graph = graph("sleeping-map", MapState) {
        start(
            map("wait", over = MapState.items, maxConcurrency = SLEEP_TASKS) { item ->
                delay(SLEEP_MILLIS)
                set(MapState.total, item)
            },
        )
    }

    /** The input of the map workloads: the items 0 until [count]. */
    @JvmStatic
    public fun mapInput(count: Int): State = MapState.initialState().with(MapState.items, List(count) { it })

    /** The total of a map workload's result. */
    @JvmStatic
    public fun total(result: RunResult): Int = result.state[MapState.total]
}
