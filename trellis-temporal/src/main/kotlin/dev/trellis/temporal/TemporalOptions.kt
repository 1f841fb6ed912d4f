package dev.trellis.temporal

import java.time.Duration

/**
 * Settings of graphs run on Temporal, the same on every worker of a task queue.
 *
 * ```kotlin
 * TemporalWorkers.register(worker, listOf(research), TemporalOptions(maxValueBytes = 512 * 1024))
 * ```
 */
public class TemporalOptions @JvmOverloads constructor(
    /** The largest encoded state value a node may write (bytes of its JSON); above it the node fails, naming the key. */
    public val maxValueBytes: Int = 256 * 1024,
    /** The start-to-close timeout of the activity of a node without a timeout of its own. */
    public val activityTimeout: Duration = Duration.ofMinutes(10),
    /** Added to a node's own timeout to make its activity's start-to-close timeout (Trellis times the attempt). */
    public val activityTimeoutMargin: Duration = Duration.ofSeconds(30),
    /** The side channel the workers publish the runs' events on, live ([LiveEvents]); null for none. */
    public val liveEvents: LiveEvents? = null,
    /**
     * The most activities a run has pending at once (Temporal refuses more than 2,000 per workflow): node attempts
     * beyond it (a map of many tasks) wait, in order, for a running one to end.
     */
    public val maxPendingActivities: Int = 1000,
    /**
     * The history length (events) at which a run continues as new: it lets its running nodes finish, starts no other,
     * and goes on in a new workflow execution of the same workflow id from where it was (`docs/temporal.md`,
     * "Continue-as-new"). A run also continues as new when Temporal suggests it. Below Temporal's limit of 51,200.
     */
    public val continueAsNewAfterEvents: Int = 10_000,
    /**
     * The ids of the nodes that are short: their attempts run as Temporal local activities, in the workflow worker's
     * process, with the same retry and timeout mapping (`docs/temporal.md`, "Local activities and heartbeats").
     * Checked against the registered graphs: an id that names no node of them is refused. Part of the workflow's
     * commands: change it only when no run of these graphs is in flight on the task queue.
     */
    public val localNodes: Set<String> = emptySet(),
    /**
     * The heartbeat timeout of node activities (not local ones), null for none: the activity worker heartbeats while
     * the node runs, so an attempt whose worker died is run again after this rather than after its start-to-close
     * timeout, and a cancelled attempt's body learns of it at its next heartbeat (`docs/temporal.md`, "Local
     * activities and heartbeats").
     */
    public val heartbeatTimeout: Duration? = null,
) {
    init {
        require(maxValueBytes > 0) { "maxValueBytes must be positive, but was $maxValueBytes." }
        require(!activityTimeout.isNegative && !activityTimeout.isZero) { "activityTimeout must be positive." }
        require(maxPendingActivities in 1..2000) {
            "maxPendingActivities must be between 1 and 2000 (Temporal's limit per workflow), but was " +
                "$maxPendingActivities."
        }
        require(continueAsNewAfterEvents in 1..MAX_HISTORY_EVENTS) {
            "continueAsNewAfterEvents must be between 1 and $MAX_HISTORY_EVENTS (well below Temporal's limit of " +
                "51,200 events per workflow execution), but was $continueAsNewAfterEvents."
        }
        require(heartbeatTimeout == null || (!heartbeatTimeout.isNegative && !heartbeatTimeout.isZero)) {
            "heartbeatTimeout must be positive (or null for no heartbeats), but was $heartbeatTimeout."
        }
        require(localNodes.none { it.isBlank() }) { "localNodes must name nodes by id, but it holds a blank id." }
    }

    /** These options, publishing the runs' events on [events] (for Java callers; Kotlin names the argument). */
    public fun withLiveEvents(events: LiveEvents): TemporalOptions = copy(liveEvents = events)

    /** These options, continuing runs as new at [events] history events (for Java callers). */
    public fun withContinueAsNewAfterEvents(events: Int): TemporalOptions = copy(continueAsNewAfterEvents = events)

    /** These options, running the nodes of the given ids as local activities (for Java callers). */
    public fun withLocalNodes(nodeIds: Set<String>): TemporalOptions = copy(localNodes = nodeIds.toSet())

    /** These options, with node activities heartbeating under [timeout] (for Java callers). */
    public fun withHeartbeatTimeout(timeout: Duration): TemporalOptions = copy(heartbeatTimeout = timeout)

    private fun copy(
        liveEvents: LiveEvents? = this.liveEvents,
        continueAsNewAfterEvents: Int = this.continueAsNewAfterEvents,
        localNodes: Set<String> = this.localNodes,
        heartbeatTimeout: Duration? = this.heartbeatTimeout,
    ): TemporalOptions = TemporalOptions(
        maxValueBytes,
        activityTimeout,
        activityTimeoutMargin,
        liveEvents,
        maxPendingActivities,
        continueAsNewAfterEvents,
        localNodes,
        heartbeatTimeout,
    )
}

/** The most `continueAsNewAfterEvents` may be: room below Temporal's 51,200 for the nodes a draining run finishes. */
private const val MAX_HISTORY_EVENTS = 40_000
