@file:JvmName("Mermaids")

package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.InternalTrellisApi

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
    return statusMermaid(this) { nodeId ->
        val node = result.nodes[nodeId]
        val status = node?.status ?: Status.PENDING
        status to "${status.name} ×${node?.executions ?: 0}"
    }
}

/**
 * A Mermaid flowchart of [graph] whose node `id` reads [statusOf]'s text below its id and is styled by its status:
 * how [toMermaid] draws a result, for other modules that draw statuses they know otherwise (the studio's timeline).
 */
@InternalTrellisApi
public fun statusMermaid(graph: Graph, statusOf: (nodeId: String) -> Pair<Status, String>): String {
    val base = graph.toMermaid()
    val labels = HashMap<String, String>()
    val classes = LinkedHashMap<Status, MutableList<String>>()
    graph.nodes.forEachIndexed { i, node ->
        val (status, text) = statusOf(node.id)
        val ref = "n$i"
        labels["    $ref[\"${escape(node.id)}\"]"] = "    $ref[\"${escape(node.id)}<br/>$text\"]"
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
