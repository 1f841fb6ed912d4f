package dev.trellis.temporal

import dev.trellis.graph.State
import dev.trellis.runtime.Status

/** What a run on Temporal ended with: its status, final state, per-node counts and first error's message. */
public class TemporalRunResult internal constructor(
    /** The run's id: the workflow id. */
    public val runId: String,
    /** The run's terminal status, as the local runtime gives it. */
    public val status: Status,
    /** The run's final state. */
    public val state: State,
    /** Per node id of the run's own graph: its status and counts. */
    public val nodes: Map<String, TemporalNodeResult>,
    /** The message of the run's first error, or null. */
    public val error: String?,
    /** The run's meter totals by name, in the order first charged, over all its segments (semantics §13.4). */
    public val meters: Map<String, Double> = emptyMap(),
) {
    /** The result of node [nodeId]. */
    public fun node(nodeId: String): TemporalNodeResult =
        nodes[nodeId]
            ?: throw NoSuchElementException("Run $runId has no result for node '$nodeId'; it has ${nodes.keys}.")

    override fun toString(): String = "TemporalRunResult($runId, $status)"
}

/** A node's status and counts in a [TemporalRunResult]. */
public class TemporalNodeResult internal constructor(
    /** The node's status (of its last execution). */
    public val status: Status,
    /** How many times it ran. */
    public val executions: Int,
    /** How many attempts its executions took in all. */
    public val attempts: Int,
) {
    override fun toString(): String = "TemporalNodeResult($status, executions=$executions, attempts=$attempts)"
}
