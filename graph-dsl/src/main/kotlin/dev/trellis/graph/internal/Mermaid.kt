package dev.trellis.graph.internal

import dev.trellis.graph.Edge
import dev.trellis.graph.Graph
import dev.trellis.graph.Node
import dev.trellis.graph.NodeSlice
import dev.trellis.graph.StateKey

/**
 * Renders a graph as a Mermaid flowchart; node ids become `n0`, `n1`, ... with the real id as label. A subgraph node
 * is drawn as a nested box holding its child graph (ids prefixed by the box's id, `n0_n1`), with the child's own
 * start and end; a map node as a subroutine shape (`[[summarize (map)]]`), or a box titled `research (map)` when its
 * tasks are subgraphs.
 */
internal object Mermaid {
    fun render(graph: Graph, showSlices: Boolean): String = buildString {
        appendLine("flowchart TD")
        body(graph, "", "    ", showSlices)
    }

    private fun StringBuilder.body(graph: Graph, prefix: String, indent: String, showSlices: Boolean) {
        val ids = graph.nodes.withIndex().associate { (i, node) -> node.id to "${prefix}n$i" }
        val start = "${prefix}__start__"
        val end = "${prefix}__end__"
        val ref = { id: String -> if (id == Graph.END) end else ids.getValue(id) }
        appendLine("$indent$start([start])")
        for (node in graph.nodes) {
            val id = ids.getValue(node.id)
            val child = node.subgraph
            val map = if (node.isMap) " (map)" else ""
            when {
                child != null -> {
                    appendLine("${indent}subgraph $id [\"${escape(node.id + map)}\"]")
                    appendLine("$indent    direction TB")
                    body(child, "${id}_", "$indent    ", showSlices)
                    appendLine("${indent}end")
                }
                node.isMap -> appendLine("$indent$id[[\"${escape(node.id + map)}\"]]")
                else -> appendLine("$indent$id[\"${label(node, showSlices)}\"]")
            }
        }
        if (graph.edges.any { Graph.END in it.targets } ||
            graph.nodes.any { n -> graph.edges.none { it.from == n.id && it !is Edge.OnFailure } }
        ) {
            appendLine("$indent$end([end])")
        }
        for (entry in graph.entryPoints) appendLine("$indent$start --> ${ref(entry)}")
        for (edge in graph.edges) {
            when (edge) {
                is Edge.Plain -> appendLine("$indent${ref(edge.from)} --> ${ref(edge.to)}")
                is Edge.Conditional -> appendLine("$indent${ref(edge.from)} -. if .-> ${ref(edge.to)}")
                is Edge.Route -> edge.targets.forEach { appendLine("$indent${ref(edge.from)} -. route .-> ${ref(it)}") }
                is Edge.FirstMatch -> {
                    edge.branches.forEachIndexed { i, branch ->
                        appendLine("$indent${ref(edge.from)} -. if ${i + 1} .-> ${ref(branch.to)}")
                    }
                    edge.otherwise?.let { appendLine("$indent${ref(edge.from)} -. otherwise .-> ${ref(it)}") }
                }
                is Edge.OnFailure -> appendLine("$indent${ref(edge.from)} -. on failure .-> ${ref(edge.to)}")
            }
        }
        for (node in graph.nodes) {
            if (graph.edges.none { it.from == node.id && it !is Edge.OnFailure }) {
                appendLine("$indent${ids.getValue(node.id)} --> $end")
            }
        }
    }

    private fun label(node: Node, showSlices: Boolean): String {
        if (!showSlices) return escape(node.id)
        val slice = node.slice
        val names = { keys: Set<StateKey<*>>? ->
            if (keys != null && keys.isEmpty()) "none" else NodeSlice.names(keys).removeSurrounding("[", "]")
        }
        val reads = names(slice?.reads)
        val writes = names(slice?.writes)
        return "${escape(node.id)}<br/>reads: ${escape(reads)}<br/>writes: ${escape(writes)}"
    }

    private fun escape(label: String): String = label.replace("\"", "#quot;")
}
