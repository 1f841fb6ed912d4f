package dev.trellis.temporal.internal

import dev.trellis.graph.InternalTrellisApi
import dev.trellis.runtime.RemoteEvents
import dev.trellis.runtime.RunEvent
import dev.trellis.temporal.EventKey
import dev.trellis.temporal.LiveEvent
import dev.trellis.temporal.LiveEvents
import java.time.Instant

/** Publishes a payload a node emits on its activity worker, live, keyed by path, execution, attempt and index. */
internal object LiveCustom {
    @OptIn(InternalTrellisApi::class)
    fun publish(
        live: LiveEvents,
        runId: String,
        nodeId: String,
        path: String,
        execution: Int,
        attempt: Int,
        index: Int,
        payload: Any,
    ) {
        // Not yet numbered by the workflow: sequence -1 (docs/temporal.md, "Events").
        val event = RemoteEvents.custom(runId, -1, Instant.now(), nodeId, execution, path, payload)
        try {
            live.publish(LiveEvent(EventKey(runId, path, execution, attempt, index.toLong()), event))
        } catch (e: Exception) {
            // Best effort: the workflow publishes the payload again when the activity completes.
        }
    }
}

/**
 * The keys of a run's events in workflow code: a custom event the workflow makes for a payload an activity returned
 * has the key the activity published it live with ([expect], in emission order per execution); every other event
 * is keyed by its sequence number.
 */
internal class LiveKeys(private val runId: String) {
    private val expected = HashMap<String, ArrayDeque<Pair<Int, Int>>>()

    /** The next custom event of [path]'s [execution] is the payload [index] of [attempt]. */
    fun expect(path: String, execution: Int, attempt: Int, index: Int) {
        expected.getOrPut("$path#$execution") { ArrayDeque() }.addLast(attempt to index)
    }

    fun keyOf(event: RunEvent): EventKey {
        if (event !is RunEvent.NodeEvent) return EventKey(runId, "", 0, 0, event.sequence)
        if (event is RunEvent.Custom) {
            val queue = expected["${event.path}#${event.execution}"]
            val next = queue?.removeFirstOrNull()
            if (queue != null && queue.isEmpty()) expected.remove("${event.path}#${event.execution}")
            if (next != null) return EventKey(runId, event.path, event.execution, next.first, next.second.toLong())
        }
        return EventKey(runId, event.path, event.execution, 0, event.sequence)
    }
}
