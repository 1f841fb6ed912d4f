package dev.trellis.runtime.internal.composition

import dev.trellis.graph.Graph
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.internal.execution.GraphRuntime
import dev.trellis.runtime.internal.execution.StartCosts
import dev.trellis.runtime.internal.execution.interceptorTable
import dev.trellis.runtime.internal.execution.taskInterceptorTable
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.Position

/**
 * Where a child run sits: its events' path [prefix] (`research/`), its checkpoint [key], the [parent] run and what
 * the parent's child runs of its graph share ([plan]).
 */
internal class Nesting(
    private val path: String,
    val key: String,
    val parent: Engine,
    val plan: ChildPlan,
    /**
     * Whether the child run is the only one of [plan] that can be running: a subgraph node's, run untimed and without
     * interceptors while its parent drives alone (no node coroutine launched yet). It then takes and leaves its position in the plan's
     * [ChildPlan.spare] with plain reads and writes, not through the graph's atomic one.
     */
    val alone: Boolean = false,
) {
    private var prefixMade: String? = null

    /**
     * The paths of the child run's nodes are this prefix and their ids; made when first needed (a race makes equal
     * strings).
     */
    val prefix: String get() = prefixMade ?: "$path/".also { prefixMade = it }
}

/**
 * What every child run of [graph] in one parent run shares, made by the first one ([Engine.childPlanOf]): the
 * interceptor tables of a run with the parent's child [options] (the same options for all of them) and the child
 * graph's [GraphRuntime] (start costs, a spare position), looked up once instead of per child run.
 */
internal class ChildPlan(val graph: Graph, options: RunOptions) {
    val runtime: GraphRuntime = StartCosts.runtimeOf(graph.topology)
    val interceptors: Array<Array<dev.trellis.graph.NodeInterceptor>?>? = interceptorTable(graph, options, runtime)
    val taskInterceptors: Array<Array<dev.trellis.graph.NodeInterceptor>?>? = taskInterceptorTable(interceptors)

    /** The position an ended child run left for the next one, when both run [alone][Nesting.alone]. */
    var spare: Position? = null

    /** [spare], reset for a new run, else the graph's ([GraphRuntime.takePosition]), or null. */
    fun takeSpare(): Position? {
        val kept = spare ?: return runtime.takePosition()
        spare = null
        kept.reuse()
        return kept
    }

    /**
     * Gives [spare] to the graph's next run ([GraphRuntime.givePosition]), when the parent run ended and none of the
     * plan's child runs can be running. (A plan replaced by another graph's while its parent runs keeps its spare.)
     */
    fun giveBackSpare() {
        val kept = spare ?: return
        spare = null
        runtime.givePosition(kept)
    }
}
