package dev.trellis.runtime

import dev.trellis.graph.InternalTrellisApi
import dev.trellis.runtime.internal.events.EventHead
import java.time.Instant

/**
 * Makes the events of a run whose nodes run elsewhere (trellis-temporal: a node's body on an activity worker, its
 * `emit` streamed live to the caller before the workflow numbers it). Not for users: events are the runtime's.
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
}
