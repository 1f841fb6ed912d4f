package dev.trellis.graph.internal

import dev.trellis.graph.Edge
import dev.trellis.graph.Graph
import dev.trellis.graph.GraphConfigBuilder
import dev.trellis.graph.Node
import dev.trellis.graph.StateSchema

/** Error routes at build time (`docs/semantics.md` §13.3): the graph-wide default's edges and the checks. */
internal object FailureRoutes {
    /** The default handler's routes: one from every node without a route of its own, except the handler. */
    fun defaults(nodes: List<Node>, edges: List<Edge>, config: GraphConfigBuilder): List<Edge> {
        val handler = config.failureHandler ?: return emptyList()
        if (nodes.none { it.id == handler }) return emptyList() // reported once by problems()
        val routed = edges.filterIsInstance<Edge.OnFailure>().mapTo(HashSet()) { it.from }
        return nodes.filter { it.id != handler && it.id !in routed }.map {
            Edge.OnFailure(it.id, handler, config.failureKey)
        }
    }

    fun problems(
        nodes: List<Node>,
        edges: List<Edge>,
        schema: StateSchema,
        config: GraphConfigBuilder,
    ): List<String> = buildList {
        val routes = edges.filterIsInstance<Edge.OnFailure>()
        for ((from, count) in routes.groupingBy { it.from }.eachCount()) {
            if (count > 1) add("Node '$from' declares onFailure $count times; route its failures to one handler.")
        }
        for (route in routes) {
            if (route.to == Graph.END) {
                add(
                    "Node '${route.from}' routes its failures to END; route them to a handler node (which may " +
                        "end the path), or drop onFailure to fail the run.",
                )
            }
            if (route.to == route.from) {
                add(
                    "Node '${route.from}' routes its failures to itself; give it a retry policy instead " +
                        "(${BuildNames.retry}), or route them to another node.",
                )
            }
            val key = route.error
            if (key != null && key.schema !== schema && key !== config.failureKey) {
                add(
                    "Node '${route.from}' writes its failures to key '${key.name}' of schema '${key.schema.name}'; " +
                        "use a key of this graph's schema '${schema.name}'.",
                )
            }
        }
        val handler = config.failureHandler
        if (handler != null && nodes.none { it.id == handler }) {
            add(
                "config: defaultOnFailure names '$handler', which is not a node of this graph; declare it with " +
                    "${BuildNames.node(handler)} or fix the name (END cannot handle a failure).",
            )
        }
        val key = config.failureKey
        if (key != null && key.schema !== schema) {
            add(
                "config: defaultOnFailure writes failures to key '${key.name}' of schema '${key.schema.name}'; " +
                    "use a key of this graph's schema '${schema.name}'.",
            )
        }
    }
}
