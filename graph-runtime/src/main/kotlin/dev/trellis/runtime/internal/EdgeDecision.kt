package dev.trellis.runtime.internal

import dev.trellis.graph.CompiledEdge
import dev.trellis.graph.Edge
import dev.trellis.graph.State

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
}
