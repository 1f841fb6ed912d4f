@file:JvmName("Mermaids")

package dev.trellis.runtime

import dev.trellis.graph.Graph

/**
 * A Mermaid flowchart of this graph (as [Graph.toMermaid]) with each node's status and execution count in
 * [result]: a node's label reads `id` and, below, `COMPLETED ×2`; nodes are styled by status (classes
 * `completed`, `failed`, `cancelled`, `interrupted`, `pending`, `executing`).
 *
 * ```kotlin
 * val result = graph.invoke(input)
 * println(graph.toMermaid(result))
 * ```
 */
public fun Graph.toMermaid(result: RunResult): String {
    require(result.graphId == id) {
        "The result is of graph '${result.graphId}', not of graph '$id'; draw it with its own graph."
    }
    return statusMermaid(this) { nodeId -> result.nodes[nodeId]?.let { it.status to it.executions } }
}

private fun statusMermaid(graph: Graph, statusOf: (String) -> Pair<Status, Int>?): String {
    val base = graph.toMermaid()
    val labels = HashMap<String, String>()
    val classes = LinkedHashMap<Status, MutableList<String>>()
    graph.nodes.forEachIndexed { i, node ->
        val (status, count) = statusOf(node.id) ?: (Status.PENDING to 0)
        val ref = "n$i"
        labels["    $ref[\"${escape(node.id)}\"]"] = "    $ref[\"${escape(node.id)}<br/>${status.name} ×$count\"]"
        classes.getOrPut(status) { ArrayList() } += ref
    }
    return buildString {
        for (line in base.lineSequence()) {
            if (line.isEmpty()) continue
            appendLine(labels[line] ?: line)
        }
        for ((status, fill) in STATUS_STYLES) appendLine("    classDef ${status.name.lowercase()} $fill")
        for ((status, refs) in classes) appendLine("    class ${refs.joinToString(",")} ${status.name.lowercase()}")
    }
}

private fun escape(label: String): String = label.replace("\"", "#quot;")

private val STATUS_STYLES = listOf(
    Status.COMPLETED to "fill:#d4f4dd,stroke:#2e7d32",
    Status.FAILED to "fill:#fbd5d5,stroke:#c62828",
    Status.CANCELLED to "fill:#eeeeee,stroke:#757575",
    Status.INTERRUPTED to "fill:#fff3c4,stroke:#f9a825",
    Status.EXECUTING to "fill:#d6e6ff,stroke:#1565c0",
    Status.PENDING to "fill:#ffffff,stroke:#9e9e9e,stroke-dasharray:3 3",
)
