package dev.trellis.runtime.internal.checkpoint

import dev.trellis.graph.Graph
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.Status

/**
 * Checks that every node a loaded position names ([names], found where [role] says) is a node of [graph], so that
 * a checkpoint written by another version of the graph is refused when it is loaded instead of failing later with
 * an index error. [where] names the checkpoint or snapshot; [data] is the position, for the version it was written with.
 *
 * @throws CheckpointFormatException naming the first unknown node, the graph and the version that wrote it.
 */
internal fun requireKnownNodes(graph: Graph, data: PositionData, where: String, role: String, names: Iterable<String>) {
    val unknown = names.firstOrNull { graph.topology.indexOf(it) < 0 } ?: return
    throw CheckpointFormatException(
        "The $where $role node '$unknown', which graph '${graph.id}' does not have: it was written by a version " +
            "of the graph " +
            "that had that node (state schema '${data.stateSchema}' version ${data.stateVersion}). Node " +
            "removals and renames " +
            "are not migrated; resume it with the version of the graph that wrote it, or add the node back.",
    )
}

/**
 * Checks the numbers and names of a loaded position ([last] is its newest part, [nodes] the merged node records)
 * that the runtime indexes with: node statuses are [Status] names, counts and the execution total are not
 * negative, triggers hold at least one token. Called on every load (resume, fork,
 * `stateAt`, snapshots), so a corrupt or hand-edited position is refused naming what is wrong instead of failing
 * later with an index error.
 *
 * @throws CheckpointFormatException naming the first problem and [where] it is.
 */
internal fun requireValidPosition(last: PositionData, nodes: Map<String, NodeData>, where: String) {
    fun refuse(problem: String): Nothing = throw CheckpointFormatException(
        "The $where $problem; it was not written by this runtime (corrupt or edited by hand). Fork the run from an " +
            "earlier checkpoint, or restore the checkpoint from a backup.",
    )
    for ((id, node) in nodes) {
        if (Status.entries.none { it.name == node.status }) {
            refuse("records node '$id' with status '${node.status.take(64)}', which is not a node status")
        }
        if (node.count < 0) refuse("records node '$id' with ${node.count} executions")
    }
    if (last.totalExecutions < 0) refuse("records ${last.totalExecutions} executions in all")
    if (last.version < 0) refuse("records state version ${last.version}")
    for (trigger in last.triggers) {
        if (trigger.tokens < 1) refuse("has a trigger of node '${trigger.node}' with ${trigger.tokens} tokens")
    }
}
