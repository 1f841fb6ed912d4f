package dev.trellis.runtime

/**
 * No condition of a first-match node held, and the node declared `otherwiseFail()` (`docs/semantics.md` §13.2).
 */
public class NoRouteMatchedException(
    /** The node whose routing found no match. */
    public val nodeId: String,
    /** The targets of its conditions, in the order they were tried. */
    public val targets: List<String>,
) : IllegalStateException(
        "No route of node '$nodeId' matched: none of its first-match conditions (to ${targets.map(::name)}, tried " +
            "in that order) held on the merged state, and it declares otherwiseFail(). Make one of them hold, or " +
            "declare otherwise(target) for a default target or otherwise(END) if the path may end there.",
    )

private fun name(target: String): String = if (target == dev.trellis.graph.Graph.END) "END" else target
