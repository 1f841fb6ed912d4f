package dev.trellis.runtime.internal.scheduling

import dev.trellis.graph.CompiledEdge
import dev.trellis.graph.Edge
import dev.trellis.graph.State
import dev.trellis.graph.Topology
import dev.trellis.runtime.NoRouteMatchedException
import dev.trellis.runtime.internal.execution.Execution

/** Returned by [decide] when a conditional edge is not taken. */
internal const val NOT_TAKEN = Int.MIN_VALUE

/** The target this edge takes after [nodeId] completed with [state] (-1 for END), or [NOT_TAKEN]. */
internal fun CompiledEdge.decide(state: State, nodeId: String): Int = when (val edge = source) {
    is Edge.Plain -> targets[0]
    is Edge.Conditional -> if (edge.condition(state)) targets[0] else NOT_TAKEN
    is Edge.Route -> {
        val selected = edge.selector(state)
        val position = targetRefs.indexOf(selected)
        check(position >= 0) {
            "The route from node '$nodeId' selected '$selected', which is not one of its declared targets " +
                "${targetRefs.toList()}; add it to the route's targets or fix the selector."
        }
        targets[position]
    }
    is Edge.FirstMatch -> firstMatch(edge, state, nodeId)
    is Edge.OnFailure -> NOT_TAKEN // taken only by a failure (`Steps.kt`)
}

/** The first branch whose condition holds, else the default; no default fails (`docs/semantics.md` §13.2). */
private fun CompiledEdge.firstMatch(edge: Edge.FirstMatch, state: State, nodeId: String): Int {
    val names = edge.targets
    for (branch in edge.branches) {
        if (branch.condition(state)) return targets[names.indexOf(branch.to)]
    }
    val otherwise = edge.otherwise ?: throw NoRouteMatchedException(nodeId, edge.branches.map { it.to })
    return targets[names.indexOf(otherwise)]
}

/** The error route of node [index], or null (`docs/semantics.md` §13.3). */
internal fun Topology.failureRoute(index: Int): CompiledEdge? {
    for (edge in outgoing[index]) if (edge.source is Edge.OnFailure) return edge
    return null
}

/**
 * The edges an execution takes, decided by the driver after its merge. One per run, reused: the driver is its
 * only user and consumes [taken] before the next [decide].
 */
internal class EdgeChoice {
    private companion object {
        /** Until the first execution with edges: a run of one node without edges allocates nothing here. */
        val NONE = IntArray(0)
    }

    /** The targets of the edges taken by the last [decide] (END is -1), in declaration order. */
    var taken = NONE
        private set

    /**
     * Decides the edges of [execution] against the merged [state] and returns how many were taken; their targets
     * are in [taken].
     */
    fun decide(topology: Topology, execution: Execution, state: State): Int {
        val edges = topology.outgoing[execution.index]
        if (edges.isEmpty()) return 0
        if (taken.size < edges.size) taken = IntArray(edges.size)
        var count = 0
        for (edge in edges) {
            val target = edge.decide(state, execution.node.id)
            if (target != NOT_TAKEN) taken[count++] = target
        }
        prepare(count, topology.size)
        return count
    }

    /**
     * For a decision that took more than [SCANNED] edges: the [decide] that last took an edge to each node, so that
     * [takenBefore] answers at once instead of scanning the edges before (a fan-out of n branches: n looks, not
     * n²/2). Made by the first such decision.
     */
    private var lastTakenBy: IntArray? = null

    /** Numbers the decisions of more than [SCANNED] edges, for [lastTakenBy]. */
    private var decision = 0

    /** Set by [decide] for a decision of more than [SCANNED] edges: [takenBefore] reads [lastTakenBy]. */
    private var marked = false

    /**
     * Whether one of the first [i] edges taken leads to [target] too. Called once for each taken edge, in order, with
     * [target] ≥ 0: for many edges, the answer marks [target] as taken.
     */
    fun takenBefore(target: Int, i: Int): Boolean {
        if (!marked) {
            for (j in 0 until i) if (taken[j] == target) return true
            return false
        }
        val marks = lastTakenBy!!
        if (marks[target] == decision) return true
        marks[target] = decision
        return false
    }

    /** Prepares [takenBefore] for a decision that took [count] edges among [size] nodes. */
    private fun prepare(count: Int, size: Int) {
        marked = count > SCANNED
        if (!marked) return
        val marks = lastTakenBy ?: IntArray(size).also { lastTakenBy = it }
        if (++decision == 0) {
            // After 2³² decisions the numbers come round: start again from a clean array.
            marks.fill(0)
            decision = 1
        }
    }
}

/** Up to this many edges taken at once, [EdgeChoice.takenBefore] scans them (no array needed). */
private const val SCANNED = 8
