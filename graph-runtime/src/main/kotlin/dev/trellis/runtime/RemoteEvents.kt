package dev.trellis.runtime

import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.StateSchema
import dev.trellis.runtime.internal.events.EventCodec
import dev.trellis.runtime.internal.events.EventHead
import kotlinx.serialization.json.JsonObject
import java.time.Instant

/**
 * Makes the events of a run whose nodes run elsewhere (trellis-temporal: a node's body on an activity worker, its
 * `emit` streamed live to the caller before the workflow numbers it), and carries events to a caller in another
 * process ([encode], [decode]). Not for users: events are the runtime's.
 */
@InternalTrellisApi
public object RemoteEvents {
    /** A [RunEvent.Custom] of [payload] emitted by node [nodeId] (at [path]) in its [execution]. */
    @JvmStatic
    public fun custom(
        runId: String,
        sequence: Long,
        timestamp: Instant,
        nodeId: String,
        execution: Int,
        path: String,
        payload: Any,
    ): RunEvent.Custom = RunEvent.Custom(EventHead(runId, sequence, timestamp, nodeId, execution, path, -1), payload)

    /**
     * [event] numbered [sequence] instead of its own, every other field kept: the events of a run that continues in
     * segments (trellis-temporal's continue-as-new: each segment is a resumed run whose events are numbered from 0)
     * numbered as one run's.
     */
    @JvmStatic
    public fun resequenced(event: RunEvent, sequence: Long): RunEvent {
        if (event.sequence == sequence) return event
        val run = event.runId
        val at = event.timestamp
        if (event is RunEvent.NodeEvent) {
            val head = EventHead(run, sequence, at, event.nodeId, event.execution, event.path, event.task)
            return when (event) {
                is RunEvent.NodeStarted -> RunEvent.NodeStarted(head)
                is RunEvent.NodeRetrying -> RunEvent.NodeRetrying(head, event.attempt, event.error, event.delay)
                is RunEvent.NodeCompleted -> RunEvent.NodeCompleted(head, event.attempts, event.duration.toNanos())
                is RunEvent.NodeFailed ->
                    RunEvent.NodeFailed(head, event.attempts, event.error, event.duration.toNanos(), event.routedTo)
                is RunEvent.NodeCancelled -> RunEvent.NodeCancelled(head)
                is RunEvent.NodeCompensating -> RunEvent.NodeCompensating(head)
                is RunEvent.NodeCompensated -> RunEvent.NodeCompensated(head, event.duration)
                is RunEvent.NodeCompensationFailed -> RunEvent.NodeCompensationFailed(head, event.error, event.duration)
                is RunEvent.Custom -> RunEvent.Custom(head, event.payload)
                is RunEvent.NodeCacheHit -> RunEvent.NodeCacheHit(head, event.attempt, event.key)
                is RunEvent.NodeCacheStored -> RunEvent.NodeCacheStored(head, event.attempt, event.key, event.expiresAt)
                is RunEvent.MetersCharged -> RunEvent.MetersCharged(head, event.charges, event.totals)
            }
        }
        return when (event) {
            is RunEvent.RunStarted -> RunEvent.RunStarted(run, sequence, at, event.graphId, event.input)
            is RunEvent.EdgeTaken -> RunEvent.EdgeTaken(run, sequence, at, event.from, event.to)
            is RunEvent.CheckpointSaved -> RunEvent.CheckpointSaved(run, sequence, at, event.checkpoint, event.full)
            is RunEvent.RunInterrupted -> RunEvent.RunInterrupted(run, sequence, at, event.result)
            is RunEvent.RunCompleted -> RunEvent.RunCompleted(run, sequence, at, event.result)
            is RunEvent.RunFailed -> RunEvent.RunFailed(run, sequence, at, event.error, event.result)
            is RunEvent.RunCancelled -> RunEvent.RunCancelled(run, sequence, at, event.result)
            is RunEvent.NodeEvent -> error("unreachable")
        }
    }

    /**
     * [event] as JSON that [decode] rebuilds in another process: a state by its keys' serializers (as checkpoints
     * write it), a `Custom` payload as its `toString()`, a `Throwable` as [typeOf] it (its class name by default) and
     * its message, a terminal event's result as its status, final state, per-node results, duration, errors,
     * interrupts and meters (`docs/temporal.md`, "Live events across JVMs").
     */
    @JvmStatic
    @JvmOverloads
    public fun encode(event: RunEvent, typeOf: (Throwable) -> String = { it.javaClass.name }): JsonObject =
        EventCodec.encode(event, typeOf)

    /**
     * The event [encode] made, its states read with the keys of [schema] (the run's graph's), each `Throwable`
     * made by [errorOf] from its type and message; a `Custom` payload is a `String`.
     *
     * @throws IllegalArgumentException when [json] is not an encoded event; [CheckpointFormatException] when a state
     *   value is not one of [schema]'s key's type.
     */
    @JvmStatic
    public fun decode(json: JsonObject, schema: StateSchema, errorOf: (String, String) -> Throwable): RunEvent =
        EventCodec.decode(json, schema, errorOf)
}
