package dev.trellis.temporal

import dev.trellis.runtime.RunEvent
import kotlinx.coroutines.flow.Flow

/**
 * The side channel that carries the events of runs on Temporal from the workers to the callers while the runs run
 * (`docs/temporal.md`, "Events"): the workflow publishes the run's events as its scheduler makes them, and each
 * node's activity publishes the payloads the node emits (tokens too) as it emits them. Delivery is at least once:
 * a workflow replayed on another worker publishes its events again, and a payload emitted live is published again
 * by the workflow when the activity completes. [TemporalRun.events] removes the repeats by [LiveEvent.key].
 *
 * Give the same channel to the workers ([TemporalOptions.liveEvents]) and to the runner
 * (`TemporalRunner(client, taskQueue, liveEvents)`). [InMemoryLiveEvents] serves workers and callers in one JVM;
 * across JVMs, implement this interface over a message broker.
 */
public interface LiveEvents {
    /** Worker side: hands over [event]. Called from workflow code: must neither block nor throw. */
    public fun publish(event: LiveEvent)

    /**
     * Caller side: the events of run [runId] published so far, then those to come, in the order they were
     * published, repeats included; the flow does not end by itself (the caller stops after the terminal event).
     */
    public fun subscribe(runId: String): Flow<LiveEvent>
}

/** An event of a run on Temporal as the side channel carries it: the [event] and the [key] its repeats share. */
public class LiveEvent(
    /** What identifies the event among its repeats. */
    public val key: EventKey,
    /** The event. */
    public val event: RunEvent,
) {
    override fun toString(): String = "LiveEvent($key, $event)"
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
