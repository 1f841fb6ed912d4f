package dev.trellis.graph

import java.util.Collections

/**
 * What [Graph.validate] finds in a built graph's node slices (`docs/semantics.md` §12): pairs of nodes that can run
 * in parallel and both declare a write to a key without a reducer, and the nodes whose writes it cannot see.
 *
 * ```kotlin
 * val report = graph.validate()
 * report.parallelWrites.forEach { println(it) }
 * ```
 */
public class GraphReport internal constructor(
    /** The id of the graph checked. */
    public val graphId: String,
    parallelWrites: List<ParallelWrite>,
    nodesWithoutWrites: List<String>,
) {
    /** Each pair of nodes that can run in parallel and may both write a key without a reducer, per key. */
    public val parallelWrites: List<ParallelWrite> = Collections.unmodifiableList(parallelWrites.toList())

    /** The nodes that declare no write slice: they may write any key, and the check cannot see them. */
    public val nodesWithoutWrites: List<String> = Collections.unmodifiableList(nodesWithoutWrites.toList())

    /** Whether no parallel writes were found (nodes without a write slice are not checked). */
    public val isClean: Boolean get() = parallelWrites.isEmpty()

    override fun toString(): String = buildString {
        append("GraphReport($graphId: ")
        append(if (isClean) "no parallel writes" else parallelWrites.joinToString("; "))
        if (nodesWithoutWrites.isNotEmpty()) append("; not checked, no write slice: $nodesWithoutWrites")
        append(")")
    }
}

/**
 * Nodes [first] and [second] can run in parallel (`docs/semantics.md` §12) and both declare a write to [key], which
 * has no reducer: if both write it while both run, the second merge fails with a conflict. [definite] when nothing
 * can keep them from starting together (two entry points without incoming edges, or two targets of plain edges of
 * one node that is their only source): `build()` refuses those.
 */
public class ParallelWrite internal constructor(
    /** The key both may write. */
    public val key: StateKey<*>,
    /** The node declared first. */
    public val first: String,
    /** The node declared second. */
    public val second: String,
    /** Whether the two always start together when their common source runs. */
    public val definite: Boolean,
) {
    /** What is wrong and how to fix it, as `build()` reports it. */
    public fun problem(): String =
        "Nodes '$first' and '$second' can run in parallel${if (definite) " (they start together)" else ""} and both " +
            "declare writes to state key '${key.name}', which has no reducer: when both write it, the second merge " +
            "fails with a conflict. Give '${key.name}' a reducer (e.g. Reducer.replace() for last-writer-wins), " +
            "order the two nodes with an edge, or remove '${key.name}' from one node's writes."

    override fun equals(other: Any?): Boolean =
        this === other ||
            (
                other is ParallelWrite && other.key == key && other.first == first && other.second == second &&
                    other.definite == definite
            )

    override fun hashCode(): Int =
        ((key.hashCode() * 31 + first.hashCode()) * 31 + second.hashCode()) * 31 + definite.hashCode()

    override fun toString(): String = "'$first' || '$second' write '${key.name}'${if (definite) " (definite)" else ""}"
}
