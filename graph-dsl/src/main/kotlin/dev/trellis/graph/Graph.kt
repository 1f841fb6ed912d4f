package dev.trellis.graph

import java.util.Collections

/**
 * An immutable, validated graph: a state [schema], [nodes], [edges], [entryPoints] and a [config].
 *
 * A graph is built once with [graph] (or the Java builder) and run any number of times, concurrently
 * too: each run has its own state. Runs are started by the runtime module (`invoke`, `run`).
 */
public class Graph internal constructor(
    /** The graph's id. */
    public val id: String,
    /** The schema of the graph's state. */
    public val schema: StateSchema,
    /** The nodes in declaration order. */
    public val nodes: List<Node>,
    /** The edges in declaration order. */
    public val edges: List<Edge>,
    /** The ids of the nodes ready when a run starts. */
    public val entryPoints: List<String>,
    /** Limits and defaults of this graph's runs. */
    public val config: GraphConfig,
    /** The compiled form the runtime executes. */
    @property:InternalTrellisApi public val topology: Topology,
) {
    /** Returns the node [id]. @throws NoSuchElementException naming the known nodes. */
    public fun node(id: String): Node =
        nodes.firstOrNull { it.id == id }
            ?: throw NoSuchElementException(
                "Graph '${this.id}' has no node '$id'. Nodes: ${nodes.joinToString { it.id }}.",
            )

    /** The edges leaving node [id], in declaration order. */
    public fun edgesFrom(id: String): List<Edge> = edges.filter { it.from == id }

    /** The edges that close a cycle (back edges of a depth-first walk from the entry points). */
    public val backEdges: List<Edge> get() = topology.backEdges

    /** A Mermaid flowchart of this graph, for docs and tools. */
    public fun toMermaid(): String = Mermaid.render(this)

    override fun toString(): String = "Graph($id, ${nodes.size} nodes, ${edges.size} edges)"

    /** Names shared by every graph. */
    public companion object {
        /** The id of the end of a path; routes may select it. */
        public const val END: String = "__end__"

        /** Node ids reserved by Trellis. */
        @JvmField
        public val RESERVED_IDS: Set<String> = Collections.unmodifiableSet(
            linkedSetOf(END, "__start__", "END", "START"),
        )
    }
}
