package dev.trellis.graph

/**
 * Thrown by [GraphBuilder.build] when a graph is invalid; [problems] lists every problem found, each
 * saying what is wrong and how to fix it.
 */
public class GraphValidationException(
    /** The id of the graph that failed to build. */
    public val graphId: String,
    /** Every problem found, one sentence or two each. */
    public val problems: List<String>,
) : IllegalArgumentException(
        "Graph '$graphId' is invalid (${problems.size} problem${if (problems.size == 1) "" else "s"}):\n" +
            problems.joinToString("\n") { "  - $it" },
    )
