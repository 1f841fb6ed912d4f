package dev.trellis.bench

import dev.trellis.graph.Graph
import dev.trellis.graph.graph
import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunOptions

/** Graphs and options of [BudgetBench]: the 100-node chain, with and without a budget, charging or not. */
public object BudgetWorkloads {
    /** The chain of [TrellisWorkloads.chain] whose every node also charges one token. */
    @JvmStatic
    public fun chargingChain(length: Int = TrellisWorkloads.CHAIN): Graph = graph("charging-$length", BenchState) {
        val nodes = (0 until length).map { i ->
            node("c$i") {
                charge("tokens", 1.0)
                update(BenchState.n) { it + 1 }
            }
        }
        start(nodes.first())
        for (i in 1 until length) nodes[i - 1] then nodes[i]
    }

    /** Options with a budget on every limit, none of which the chain reaches. */
    @JvmStatic
    public fun budgeted(): RunOptions = RunOptions(
        budget = Budget().withMeter("tokens", 1e9).withMaxNodeExecutions(1_000_000)
            .withMaxWallTime(java.time.Duration.ofHours(1)),
    )
}
