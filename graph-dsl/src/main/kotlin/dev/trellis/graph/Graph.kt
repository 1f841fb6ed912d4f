package dev.trellis.graph

import dev.trellis.graph.internal.Mermaid
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

    /** Whether a node of this graph is a subgraph or map node (`docs/semantics.md` §11). */
    @InternalTrellisApi
    public val hasComposites: Boolean = nodes.any { it.composite != null }

    /** The edges that close a cycle (back edges of a depth-first walk from the entry points). */
    public val backEdges: List<Edge> get() = topology.backEdges

    /**
     * A Mermaid flowchart of this graph, for docs and tools. With [showSlices], each node's label also lists the
     * keys it declared it reads and writes (`*` for an undeclared half).
     */
    @JvmOverloads
    public fun toMermaid(showSlices: Boolean = false): String = Mermaid.render(this, showSlices)

    /**
     * Checks the node slices of this graph (`docs/semantics.md` §12) and reports the pairs of nodes that can run in
     * parallel and both declare writes to a key without a reducer, and the nodes it cannot check (no write slice).
     * `build()` already refused the definite pairs; the rest are reported here.
     *
     * ```kotlin
     * graph.validate().parallelWrites.forEach { println(it.problem()) }
     * ```
     */
    public fun validate(): GraphReport = GraphReport(
        id,
        ParallelWrites.find(topology, config.maxConcurrency),
        nodes.filter { it.slice?.writes == null }.map { it.id },
    )

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
