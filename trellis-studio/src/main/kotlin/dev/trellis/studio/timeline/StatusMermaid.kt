package dev.trellis.studio.timeline

import dev.trellis.graph.Graph
import dev.trellis.runtime.Status
import dev.trellis.runtime.statusMermaid as drawStatuses

/**
 * A Mermaid flowchart of [graph] with each node's status and count from [nodes] (as `Graph.toMermaid(result)` draws
 * a result); a node that never ran reads `not run`.
 */
internal fun statusMermaid(graph: Graph, nodes: List<TimelineNode>): String {
    val byId = nodes.associateBy { it.nodeId }
    return drawStatuses(graph) { nodeId ->
        val known = byId[nodeId]
        val status = known?.status ?: Status.PENDING
        val count = known?.executions ?: 0
        status to if (count == 0) "not run" else "${status.name} ×$count"
    }
}
