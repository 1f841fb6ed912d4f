package dev.trellis.graph

/** Renders a graph as a Mermaid flowchart; node ids become `n0`, `n1`, ... with the real id as label. */
internal object Mermaid {
    fun render(graph: Graph): String = buildString {
        val ids = graph.nodes.withIndex().associate { (i, node) -> node.id to "n$i" }
        val ref = { id: String -> if (id == Graph.END) "__end__" else ids.getValue(id) }
        appendLine("flowchart TD")
        appendLine("    __start__([start])")
        for (node in graph.nodes) appendLine("    ${ids.getValue(node.id)}[\"${escape(node.id)}\"]")
        if (graph.edges.any { Graph.END in it.targets } ||
            graph.nodes.any { n -> graph.edges.none { it.from == n.id } }
        ) {
            appendLine("    __end__([end])")
        }
        for (entry in graph.entryPoints) appendLine("    __start__ --> ${ref(entry)}")
        for (edge in graph.edges) {
            when (edge) {
                is Edge.Plain -> appendLine("    ${ref(edge.from)} --> ${ref(edge.to)}")
                is Edge.Conditional -> appendLine("    ${ref(edge.from)} -. if .-> ${ref(edge.to)}")
                is Edge.Route -> edge.targets.forEach { appendLine("    ${ref(edge.from)} -. route .-> ${ref(it)}") }
            }
        }
        for (node in graph.nodes) {
            if (graph.edges.none { it.from == node.id }) appendLine("    ${ids.getValue(node.id)} --> __end__")
        }
    }

    private fun escape(label: String): String = label.replace("\"", "#quot;")
}
