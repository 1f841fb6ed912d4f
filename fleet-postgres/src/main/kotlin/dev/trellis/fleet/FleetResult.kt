package dev.trellis.fleet

import dev.trellis.fleet.internal.StateJson
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import java.time.Instant

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

/**
 * One run of the queue, its row as the fleet sees it: listed by [FleetClient.list], read by [FleetClient.info] and
 * [FleetClient.infos] (what Trellis Studio shows of a fleet's run).
 */
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
    /** The worker holding it, while RUNNING (null while it waits to be retried after a fault). */
    public val worker: String?,
    /** Its priority in the queue (higher first). */
    public val priority: Int = 0,
    /** When it was submitted. */
    public val submittedAt: Instant? = null,
    /** When a worker first claimed it, or null while it was never claimed. */
    public val startedAt: Instant? = null,
    /** When its latest claim was made, or null (never claimed, or a queue of an older version). */
    public val claimedAt: Instant? = null,
    /** When the worker of its latest claim last renewed it (its heartbeat), or null. */
    public val heartbeatAt: Instant? = null,
    /** Until when the worker's claim holds, while RUNNING; past it another worker takes the run over. */
    public val leaseUntil: Instant? = null,
    /** When it completed or failed, or null. */
    public val finishedAt: Instant? = null,
    /**
     * How many of its claims were lost: a worker's lease lapsed (the worker died, stalled or lost the database) and
     * another claim took the run over.
     */
    public val lostClaims: Int = 0,
    /**
     * Whether its current claim is lost now: RUNNING under a worker whose lease has lapsed, waiting for another
     * worker to take it over.
     */
    public val claimLapsed: Boolean = false,
    /** Why it failed, or the fault it waits to be retried after; else null. */
    public val error: String? = null,
) {
    override fun toString(): String =
        "FleetRunInfo($runId, $graphId@$graphVersion, $status, attempt=$attempt, worker=$worker, " +
            "lostClaims=$lostClaims, claimLapsed=$claimLapsed)"
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
