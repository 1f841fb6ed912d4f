package dev.trellis.studio.timeline

import dev.trellis.graph.Graph
import dev.trellis.runtime.Status

/**
 * A Mermaid flowchart of [graph] with each node's status and count from [nodes] (as `Graph.toMermaid(result)` draws
 * a result); a node that never ran reads `not run`.
 */
internal fun statusMermaid(graph: Graph, nodes: List<TimelineNode>): String {
    val byId = nodes.associateBy { it.nodeId }
    val base = graph.toMermaid()
    val labels = HashMap<String, String>()
    val classes = LinkedHashMap<Status, MutableList<String>>()
    graph.nodes.forEachIndexed { i, node ->
        val known = byId[node.id]
        val status = known?.status ?: Status.PENDING
        val count = known?.executions ?: 0
        val ref = "n$i"
        val id = node.id.replace("\"", "#quot;")
        val text = if (count == 0) "not run" else "${status.name} ×$count"
        labels["    $ref[\"$id\"]"] = "    $ref[\"$id<br/>$text\"]"
        classes.getOrPut(status) { ArrayList() } += ref
    }
    return buildString {
        for (line in base.lineSequence()) {
            if (line.isEmpty()) continue
            appendLine(labels[line] ?: line)
        }
        for ((status, fill) in STYLES) appendLine("    classDef ${status.name.lowercase()} $fill")
        for ((status, refs) in classes) appendLine("    class ${refs.joinToString(",")} ${status.name.lowercase()}")
    }
}

private val STYLES = listOf(
    Status.COMPLETED to "fill:#d4f4dd,stroke:#2e7d32",
    Status.FAILED to "fill:#fbd5d5,stroke:#c62828",
    Status.CANCELLED to "fill:#eeeeee,stroke:#757575",
    Status.INTERRUPTED to "fill:#fff3c4,stroke:#f9a825",
    Status.EXECUTING to "fill:#d6e6ff,stroke:#1565c0",
    Status.PENDING to "fill:#ffffff,stroke:#9e9e9e,stroke-dasharray:3 3",
)
