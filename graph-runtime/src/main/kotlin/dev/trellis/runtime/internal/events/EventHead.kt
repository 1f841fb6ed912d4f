package dev.trellis.runtime.internal.events

import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.scheduling.Engine
import java.time.Instant

/**
 * The fields every node event shares (`RunEvent.NodeEvent`): its run, [sequence] number and [timestamp], and the
 * execution it is about — node, execution number, path and map task. One carrier instead of seven constructor
 * parameters in each event class. An event copies them into its own fields when it is made and never keeps its head:
 * events stay one object each, and a head is only read while its event is built.
 *
 * So the driver, which builds its events one at a time, refills one head for all of them ([driverHead]) instead of
 * making one per event: the JIT's escape analysis removes a head made per event only where the code that builds the
 * event is compiled with the event's constructors inlined, which the driver's large methods did not always get (an
 * object of 48 bytes per node event then). Other producers — a node's own events, map tasks, compensations, decoded
 * events — may build events concurrently, and make their own ([eventHead]).
 *
 * An event is made once, with its sequence number already claimed from the run's [EventLog], and never changes: no
 * reader can see an event without its number (`docs/semantics.md` §8).
 */
internal class EventHead(
    var runId: String,
    var sequence: Long,
    var timestamp: Instant,
    var nodeId: String,
    var execution: Int,
    var path: String,
    var task: Int,
) {
    /** This head, refilled for an event of [source] numbered [sequence], made at [timestamp]. */
    fun refill(source: Execution, sequence: Long, timestamp: Instant): EventHead {
        runId = source.engine.runId
        this.sequence = sequence
        this.timestamp = timestamp
        nodeId = source.node.id
        execution = source.number
        path = source.path
        task = source.task
        return this
    }
}

/** A new head of an event of this execution (a node's own, or a map task's) numbered [sequence], made at [timestamp]. */
internal fun Execution.eventHead(sequence: Long, timestamp: Instant): EventHead =
    EventHead(engine.runId, sequence, timestamp, node.id, number, path, task)

/**
 * The head of an event the driver posts about [execution] (`Outbox.post`): the driver's one head, kept by the run's
 * position (which the next run of the graph takes over, see `Position.reuse`) and refilled. Only the holder of the
 * drive right calls this, right before the event is made from it.
 */
internal fun Engine.driverHead(execution: Execution, sequence: Long, timestamp: Instant): EventHead =
    position.eventHead?.refill(execution, sequence, timestamp)
        ?: execution.eventHead(sequence, timestamp).also { position.eventHead = it }
