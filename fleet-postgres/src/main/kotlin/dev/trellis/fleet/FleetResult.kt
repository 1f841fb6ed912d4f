package dev.trellis.fleet

import dev.trellis.fleet.internal.StateJson
import dev.trellis.graph.Graph
import dev.trellis.graph.State

/** What a run of the queue came to so far, as read by [FleetRun.await] or [FleetRun.result]. */
public class FleetResult internal constructor(
    /** The run's id. */
    public val runId: String,
    /** Its status. */
    public val status: FleetStatus,
    /** How many times a worker claimed it (the first claim is 1). */
    public val attempt: Int,
    /** The final state as a JSON object of key name to value, when [status] is COMPLETED; else null. */
    public val output: String?,
    /** Why the run failed, when [status] is FAILED; else null. */
    public val error: String?,
    /** What the run asks, when [status] is PAUSED; else empty. */
    public val interrupts: List<FleetInterrupt>,
) {
    /**
     * The final state, read with [graph]'s keys.
     * @throws IllegalStateException when the run has not completed.
     */
    public fun state(graph: Graph): State {
        val json = checkNotNull(output) { "Run '$runId' is $status; only a COMPLETED run has a final state." }
        return StateJson.decode(graph, json)
    }

    override fun toString(): String =
        "FleetResult($runId, $status, attempt=$attempt, error=$error, interrupts=$interrupts)"
}

/** A pending interrupt of a PAUSED run: node [nodeId] asked [payload]. */
public class FleetInterrupt internal constructor(
    /** The node that asked. */
    public val nodeId: String,
    /** What it asked. */
    public val payload: String,
) {
    override fun equals(other: Any?): Boolean =
        other is FleetInterrupt && other.nodeId == nodeId && other.payload == payload

    override fun hashCode(): Int = 31 * nodeId.hashCode() + payload.hashCode()

    override fun toString(): String = "FleetInterrupt($nodeId: $payload)"
}

/** One run of the queue as listed by [FleetClient.list]. */
public class FleetRunInfo internal constructor(
    /** The run's id. */
    public val runId: String,
    /** Its graph. */
    public val graphId: String,
    /** Its graph version. */
    public val graphVersion: Int,
    /** Its status. */
    public val status: FleetStatus,
    /** How many times a worker claimed it. */
    public val attempt: Int,
    /** The worker holding it, while RUNNING. */
    public val worker: String?,
) {
    override fun toString(): String =
        "FleetRunInfo($runId, $graphId@$graphVersion, $status, attempt=$attempt, worker=$worker)"
}

/** How many runs of one graph version are in each status, as counted by [FleetClient.counts]. */
public class GraphCounts internal constructor(
    /** The graph. */
    public val graphId: String,
    /** Its version. */
    public val graphVersion: Int,
    /** Runs waiting for a worker. */
    public val queued: Long,
    /** Runs claimed by a worker. */
    public val running: Long,
    /** Runs waiting for answers. */
    public val paused: Long,
    /** Runs that completed (until retention deletes them). */
    public val completed: Long,
    /** Runs that failed (until retention deletes them). */
    public val failed: Long,
) {
    override fun toString(): String =
        "GraphCounts($graphId@$graphVersion: queued=$queued, running=$running, paused=$paused, completed=$completed, " +
            "failed=$failed)"
}
