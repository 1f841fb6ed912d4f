package dev.trellis.runtime.internal.checkpoint

import dev.trellis.graph.Graph
import dev.trellis.runtime.CheckpointFormatException

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
