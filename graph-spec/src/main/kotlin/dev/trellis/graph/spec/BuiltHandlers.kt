package dev.trellis.graph.spec

import dev.trellis.graph.Composite
import dev.trellis.graph.Edge
import dev.trellis.graph.Graph
import java.util.IdentityHashMap

/**
 * The functions a built graph holds, registered under names made from where they are ([HandlerRegistry.Builder
 * .handlersOf]): what lets a graph whose functions were never registered — one built with the Java builder, which
 * wraps each Java lambda in a function of its own — export to a spec and load back.
 */
internal object BuiltHandlers {
    fun register(builder: HandlerRegistry.Builder, graph: Graph) {
        val known = IdentityHashMap<Any, Unit>()
        with(builder) {
            listOf(nodes, tasks, conditions, selectors, interceptors, compensations, cacheKeys)
                .forEach { kind -> kind.values.forEach { known[it] = Unit } }
        }
        register(builder, graph, known, HashSet())
    }

    private fun register(
        builder: HandlerRegistry.Builder,
        graph: Graph,
        known: IdentityHashMap<Any, Unit>,
        seen: MutableSet<String>,
    ) {
        if (!seen.add(graph.id)) return

        fun fresh(handler: Any): Boolean = Origins.of(handler) == null && known.put(handler, Unit) == null
        if (builder.schemas[graph.schema.name] == null) builder.schema(graph.schema)
        for (node in graph.nodes) {
            val at = "${graph.id}.${node.id}"
            when (val composite = node.composite) {
                null -> if (fresh(node.body)) builder.node(at, node.body)
                is Composite.Subgraph -> register(builder, composite.graph, known, seen)
                is Composite.Map -> {
                    composite.body?.let { if (fresh(it)) builder.task("$at.task", it) }
                    composite.graph?.let { register(builder, it, known, seen) }
                }
            }
            node.interceptors.forEachIndexed { i, it -> if (fresh(it)) builder.interceptor("$at.interceptor$i", it) }
            node.compensation?.let { if (fresh(it)) builder.compensation("$at.compensation", it) }
            node.cache?.key?.let { if (fresh(it)) builder.cacheKey("$at.cacheKey", it) }
        }
        graph.config.interceptors.forEachIndexed { i, it ->
            if (fresh(it)) builder.interceptor("${graph.id}.interceptor$i", it)
        }
        for (edge in graph.edges) {
            val at = "${graph.id}.${edge.from}"
            when (edge) {
                is Edge.Conditional -> if (fresh(edge.condition)) builder.condition("$at.to.${edge.to}", edge.condition)
                is Edge.Route -> if (fresh(edge.selector)) builder.selector("$at.route", edge.selector)
                is Edge.FirstMatch -> edge.branches.forEachIndexed { i, branch ->
                    if (fresh(branch.condition)) builder.condition("$at.match$i", branch.condition)
                }
                is Edge.Plain, is Edge.OnFailure -> Unit
            }
        }
    }
}
