package dev.trellis.temporal.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.Node
import dev.trellis.temporal.TemporalOptions

/**
 * What `TemporalWorkers.register` refuses before a worker takes a run: a policy that cannot keep its meaning on
 * Temporal (`docs/temporal.md`, "Where the meaning differs") and a [TemporalOptions.localNodes] id that names no node.
 */
internal object GraphChecks {
    /** @throws IllegalArgumentException naming the node, the policy and what to use instead. */
    fun check(graphs: Collection<Graph>, options: TemporalOptions) {
        val ids = HashSet<String>()
        for (graph in graphs) visit(graph, graph.id) { node, where -> checkNode(node, where, ids) }
        val unknown = options.localNodes - ids
        require(unknown.isEmpty()) {
            "TemporalOptions.localNodes names ${unknown.sorted()}, which no registered graph has as a node id; " +
                "name nodes by id (the id inside a subgraph, not the path), among ${ids.sorted()}."
        }
    }

    private fun checkNode(node: Node, where: String, ids: MutableSet<String>) {
        ids += node.id
        require(node.compensation == null) {
            "Node '${node.id}' of graph '$where' declares a compensation, which runs in the scheduler: on Temporal " +
                "that is workflow code, where a side effect runs again at every replay, so it is not supported. " +
                "Route the failure to a node that undoes the work instead (onFailure: it runs as an activity), or " +
                "run this graph locally."
        }
        require(node.cache == null) {
            "Node '${node.id}' of graph '$where' declares a result cache, which reads and writes a store from the " +
                "scheduler: on Temporal that is workflow code, where I/O is not allowed, so it is not supported. " +
                "Remove the cache from this node (Temporal keeps completed attempts in the history: a replay does " +
                "not run them again), look the result up inside the node's body, or run this graph locally."
        }
    }

    /** Calls [each] for every node of [graph] and of its subgraphs, at any depth, with the path of its graph. */
    private fun visit(graph: Graph, where: String, each: (Node, String) -> Unit) {
        for (node in graph.nodes) {
            each(node, where)
            node.subgraph?.let { visit(it, "$where/${node.id}", each) }
        }
    }
}
