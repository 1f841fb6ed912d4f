package dev.trellis.runtime.internal.events

import dev.trellis.runtime.internal.execution.Execution
import java.time.Instant

/**
 * The fields every node event shares (`RunEvent.NodeEvent`): its run, [sequence] number and [timestamp], and the
 * execution it is about — node, execution number, path and map task. One carrier instead of seven constructor
 * parameters in each event class. An event copies them into its own fields when it is made: events stay one object
 * each, and a head lives only while its event is built (short-lived enough for the JIT's escape analysis to drop it
 * where the building code is compiled).
 *
 * An event is made once, with its sequence number already claimed from the run's [EventLog], and never changes: no
 * reader can see an event without its number (`docs/semantics.md` §8).
 */
internal class EventHead(
    val runId: String,
    val sequence: Long,
    val timestamp: Instant,
    val nodeId: String,
    val execution: Int,
    val path: String,
    val task: Int,
)

/** The head of an event of this execution (a node's own, or a map task's) numbered [sequence], made at [timestamp]. */
internal fun Execution.eventHead(sequence: Long, timestamp: Instant): EventHead =
    EventHead(engine.runId, sequence, timestamp, node.id, number, path, task)
