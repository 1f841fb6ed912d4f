package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.runtime.RunEvent
import kotlinx.coroutines.flow.Flow

/**
 * The side channel that carries the events of runs on Temporal from the workers to the callers while the runs run
 * (`docs/temporal.md`, "Events"): the workflow publishes the run's events as its scheduler makes them, and each
 * node's activity publishes the payloads the node emits (tokens too) as it emits them. Delivery is at least once:
 * a workflow replayed on another worker publishes its events again, and a payload emitted live is published again
 * by the workflow when the activity completes. [TemporalRun.events] removes the repeats by [LiveEvent.key], and
 * passes an event of the workflow on once the workflow task that made it completed ([LiveEvent.task]).
 *
 * Give the same channel to the workers ([TemporalOptions.liveEvents]) and to the runner
 * (`TemporalRunner(client, taskQueue, liveEvents)`). [InMemoryLiveEvents] serves workers and callers in one JVM;
 * [PostgresLiveEvents] serves workers and callers in any number of JVMs through a PostgreSQL table (`docs/temporal.md`,
 * "Live events across JVMs").
 */
public interface LiveEvents {
    /** Worker side: hands over [event]. Called from workflow code: must neither block nor throw. */
    public fun publish(event: LiveEvent)

    /**
     * Caller side: the events of run [runId] of [graph] published so far, then those to come, in the order they were
     * published, repeats included; the flow does not end by itself (the caller stops after the terminal event). A
     * channel across processes rebuilds the events with [graph]'s state keys (the version the run runs).
     */
    public fun subscribe(runId: String, graph: Graph): Flow<LiveEvent>
}

/**
 * An event of a run on Temporal as the side channel carries it: the [event], the [key] its repeats share, and the
 * workflow [task] that made it (null for a payload an activity published). A channel across processes carries all
 * three.
 */
public class LiveEvent @JvmOverloads constructor(
    /** What identifies the event among its repeats. */
    public val key: EventKey,
    /** The event. */
    public val event: RunEvent,
    /**
     * The workflow task whose code made the event, or null for a payload an activity published: the caller's stream
     * passes the event on only once the workflow, asked between its tasks, lists that task as one of its completed
     * ones (`docs/temporal.md`, "Events").
     */
    public val task: WorkflowTaskId? = null,
) {
    override fun toString(): String = "LiveEvent($key, $event${task?.let { ", $it" } ?: ""})"
}

/**
 * A workflow task of a run on Temporal: the workflow execution ([executionRunId], Temporal's run id, one per
 * continue-as-new segment) and the id of the task's `WorkflowTaskStarted` event in that execution's history.
 */
public class WorkflowTaskId(
    /** Temporal's run id of the workflow execution (not the Trellis run id, which is the workflow id). */
    public val executionRunId: String,
    /** The event id of the task's `WorkflowTaskStarted` in the execution's history. */
    public val startedEventId: Long,
) {
    override fun equals(other: Any?): Boolean =
        other is WorkflowTaskId && other.executionRunId == executionRunId && other.startedEventId == startedEventId

    override fun hashCode(): Int = executionRunId.hashCode() * 31 + startedEventId.hashCode()

    override fun toString(): String = "$executionRunId@$startedEventId"
}

/**
 * What identifies an event of a run on Temporal among its repeats: the [runId], the [node] path, its [execution]
 * and [attempt], and a [sequence] number. A payload a node emitted has its node path, execution and attempt and
 * its index among the payloads the attempt emitted; an event of the scheduler has attempt 0 and its sequence number
 * in the run (`RunEvent.sequence`), with the node path of a node event or `""`.
 */
public class EventKey(
    /** The run (workflow id). */
    public val runId: String,
    /** The node path, or `""` for an event of the run as a whole. */
    public val node: String,
    /** The node's execution number, or 0. */
    public val execution: Int,
    /** The attempt that emitted the payload, or 0 for an event of the scheduler. */
    public val attempt: Int,
    /** The payload's index in its attempt, or the scheduler's event number. */
    public val sequence: Long,
) {
    override fun equals(other: Any?): Boolean = other is EventKey && other.runId == runId && other.node == node &&
        other.execution == execution && other.attempt == attempt && other.sequence == sequence

    override fun hashCode(): Int = ((runId.hashCode() * 31 + node.hashCode()) * 31 + execution) * 31 * 31 +
        attempt * 31 + sequence.hashCode()

    override fun toString(): String = "$runId/$node#$execution.$attempt:$sequence"
}
