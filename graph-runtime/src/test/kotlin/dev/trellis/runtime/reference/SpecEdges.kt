package dev.trellis.runtime.reference

import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.StateKey

/**
 * Wires a [GraphSpec]'s entries, edges and limits between its built nodes [refs] (node `i` is `refs[i]`): plain edges,
 * conditions and selectors reading the deciding node's own counter, `counters[i]`, as [GraphSpec] says.
 */
fun GraphBuilder.wire(spec: GraphSpec, refs: List<NodeRef>, counters: List<StateKey<Int>>) {
    fun ref(t: Int): NodeRef = if (t < 0) NodeRef.END else refs[t]
    start(*spec.entries.map { refs[it] }.toTypedArray())
    for (edge in spec.edges) {
        val from = refs[edge.from]
        when (edge) {
            is EdgeSpec.Plain -> from then refs[edge.to]
            is EdgeSpec.Conditional -> from.then(refs[edge.to]) { it[counters[edge.from]] < edge.below }
            is EdgeSpec.Route -> from.route(*edge.targets.map(::ref).toTypedArray()) {
                ref(edge.select(it[counters[edge.from]]))
            }
        }
    }
    config {
        maxNodeExecutions = spec.maxNodeExecutions
        maxConcurrency = spec.maxConcurrency
    }
}
