package dev.trellis.runtime

import dev.trellis.runtime.internal.events.EventHead
import java.time.Duration
import java.time.Instant

/**
 * Something that happened during a run, as streamed by `Graph.events`.
 *
 * Every event has the [runId], a [sequence] number (0, 1, 2, ... in delivery order) and a [timestamp]. Events
 * of one execution of a node are [NodeEvent]s (they carry its node id and execution number); the events that end
 * a run are [Terminal] (they carry its result). The others are about the run as a whole: [RunStarted],
 * [EdgeTaken], [CheckpointSaved].
 *
 * Pairing rules (see `docs/semantics.md`): the first event is [RunStarted] and exactly one terminal event
 * ([RunCompleted], [RunFailed], [RunCancelled], [RunInterrupted]) is the last; every [NodeStarted] is followed by
 * exactly one [NodeCompleted], [NodeFailed] or [NodeCancelled] for the same node and execution.
 */
public sealed class RunEvent(
    /** The id of the run. */
    public val runId: String,
    /**
     * The position of this event in its run's stream, from 0, without gaps: the order in which the collector receives
     * the events. Set when the event is made, like every field (`docs/semantics.md` §8).
     */
    public val sequence: Long,
    /** When the event happened. */
    public val timestamp: Instant,
) {
    /** The names of the event's fields, for `toString`. */
    protected abstract fun describe(): String

    override fun toString(): String = "${javaClass.simpleName}(#$sequence, ${describe()})"

    /** Whether this event ends the run (a [Terminal] event): no event of the run follows it. */
    public val isTerminal: Boolean get() = this is Terminal

    /**
     * An event of one execution of a node: [NodeStarted], [NodeRetrying], [NodeCompleted], [NodeFailed],
     * [NodeCancelled], [Custom], [NodeCacheHit], [NodeCacheStored], [MetersCharged], and when a failed run compensates
     * it [NodeCompensating], [NodeCompensated], [NodeCompensationFailed].
     */
    public sealed class NodeEvent(
        /** The fields every node event has, in one carrier (`internal/events/EventHead.kt`). */
        head: EventHead,
    ) : RunEvent(head.runId, head.sequence, head.timestamp) {
        /** The node. */
        public val nodeId: String = head.nodeId

        /** The execution number of the node in this run, from 1 (a map's tasks share their map's execution number). */
        public val execution: Int = head.execution

        /**
         * Where the node is: its id for nodes of the run's own graph; `research/web` for node `web` of the child run
         * of subgraph node `research`; `summarize[3]` for task 3 of map node `summarize` (`docs/semantics.md` §11).
         */
        public val path: String = head.path

        /**
         * The index of the map task when this is one of a task's own events (`summarize[3]`: 3), else -1 — also for
         * the nodes of a task's child run, whose [path] names the task (`research[3]/web`).
         */
        public val task: Int = head.task

        override fun describe(): String = "$path#$execution"
    }

    /** The last event of a run, with its [result]: [RunCompleted], [RunFailed], [RunCancelled], [RunInterrupted]. */
    public sealed class Terminal(
        runId: String,
        sequence: Long,
        timestamp: Instant,
        /** The run's result. */
        public val result: RunResult,
    ) : RunEvent(runId, sequence, timestamp)

    /** The run started from [input]. */
    public class RunStarted internal constructor(
        runId: String,
        sequence: Long,
        timestamp: Instant,
        /** The graph's id. */
        public val graphId: String,
        /** The run's initial state. */
        public val input: dev.trellis.graph.State,
    ) : RunEvent(runId, sequence, timestamp) {
        override fun describe(): String = "graph=$graphId"
    }

    /** An execution of [nodeId] started (its first attempt). */
    public class NodeStarted internal constructor(head: EventHead) : NodeEvent(head)

    /** Attempt [attempt] of an execution failed with [error]; attempt `attempt + 1` starts after [delay]. */
    public class NodeRetrying internal constructor(
        head: EventHead,
        /** The attempt that failed. */
        public val attempt: Int,
        /** Why it failed. */
        public val error: Throwable,
        /** The wait before the next attempt. */
        public val delay: Duration,
    ) : NodeEvent(head) {
        override fun describe(): String = "$path#$execution attempt=$attempt delay=$delay error=$error"
    }

    /** An execution completed and its writes were merged into the state. */
    public class NodeCompleted internal constructor(
        head: EventHead,
        /** How many attempts it took. */
        public val attempts: Int,
        private val durationNanos: Long,
    ) : NodeEvent(head) {
        /** How long the execution took, retries included. */
        public val duration: Duration get() = Duration.ofNanos(durationNanos)

        override fun describe(): String = "$path#$execution attempts=$attempts"
    }

    /**
     * An execution failed with [error] (after its retries). When [routedTo] is set, the failure went to that handler
     * (an error route, `docs/semantics.md` §13.3) instead of failing the run, and an [EdgeTaken] to it follows.
     */
    public class NodeFailed internal constructor(
        head: EventHead,
        /** How many attempts it took. */
        public val attempts: Int,
        /** The failure. */
        public val error: Throwable,
        private val durationNanos: Long,
        /** The path of the handler node the failure was routed to, or null when it fails the run. */
        public val routedTo: String? = null,
    ) : NodeEvent(head) {
        /** How long the execution took, retries included. */
        public val duration: Duration get() = Duration.ofNanos(durationNanos)

        override fun describe(): String =
            "$path#$execution attempts=$attempts error=$error" + (routedTo?.let { " routedTo=$it" } ?: "")
    }

    /** An execution was cancelled (run cancelled, fail-fast or run timeout). */
    public class NodeCancelled internal constructor(head: EventHead) : NodeEvent(head)

    /**
     * The run failed and the compensation of this completed execution starts (`docs/semantics.md` §13.6); exactly one
     * [NodeCompensated] or [NodeCompensationFailed] of the same execution follows.
     */
    public class NodeCompensating internal constructor(head: EventHead) : NodeEvent(head)

    /** The compensation of this execution ended normally. */
    public class NodeCompensated internal constructor(
        head: EventHead,
        /** How long the compensation took. */
        public val duration: Duration,
    ) : NodeEvent(head)

    /**
     * The compensation of this execution threw [error], or was cut off by a cancellation (then [error] is the
     * `CancellationException`); the run's other compensations still run (unless it was cancelled).
     */
    public class NodeCompensationFailed internal constructor(
        head: EventHead,
        /** Why the compensation failed. */
        public val error: Throwable,
        /** How long the compensation ran. */
        public val duration: Duration,
    ) : NodeEvent(head) {
        override fun describe(): String = "$path#$execution error=$error"
    }

    /**
     * After an execution of [from] completed, its edge to [to] ([dev.trellis.graph.Graph.END] included) was taken.
     * Inside a child run both are paths (`research/web` -> `research/summarize`).
     */
    public class EdgeTaken internal constructor(
        runId: String,
        sequence: Long,
        timestamp: Instant,
        /** The node the edge leaves. */
        public val from: String,
        /** The node the edge leads to, or `__end__`. */
        public val to: String,
    ) : RunEvent(runId, sequence, timestamp) {
        override fun describe(): String = "$from -> $to"
    }

    /** A payload a node streamed with `emit`. */
    public class Custom internal constructor(
        head: EventHead,
        /** What the node emitted. */
        public val payload: Any,
    ) : NodeEvent(head) {
        override fun describe(): String = "$path#$execution payload=$payload"
    }

    /**
     * An attempt of a cached node found its [key] in the run's cache (`docs/semantics.md` §13.5): the body did not run,
     * the cached writes are the attempt's.
     */
    public class NodeCacheHit internal constructor(
        head: EventHead,
        /** The attempt that hit. */
        public val attempt: Int,
        /** The key the node's cache policy computed. */
        public val key: String,
    ) : NodeEvent(head) {
        override fun describe(): String = "$path#$execution attempt=$attempt key=$key"
    }

    /**
     * An attempt of a cached node missed its [key], ran its body, and stored its writes (`docs/semantics.md` §13.5);
     * the entry expires at [expiresAt] (never when null).
     */
    public class NodeCacheStored internal constructor(
        head: EventHead,
        /** The attempt whose writes were stored. */
        public val attempt: Int,
        /** The key the node's cache policy computed. */
        public val key: String,
        /** When the entry expires, or null for never. */
        public val expiresAt: Instant?,
    ) : NodeEvent(head) {
        override fun describe(): String = "$path#$execution attempt=$attempt key=$key expiresAt=$expiresAt"
    }

    /**
     * An execution charged meters (`docs/semantics.md` §13.4): its own [charges] by meter, and the run's [totals] after
     * adding them. Comes right before the execution's end event; an execution that charged nothing has none.
     */
    public class MetersCharged internal constructor(
        head: EventHead,
        /** What this execution charged, by meter (every attempt's, and its child runs' and tasks'). */
        public val charges: Map<String, Double>,
        /** The run's totals after these charges, by meter. */
        public val totals: Map<String, Double>,
    ) : NodeEvent(head) {
        override fun describe(): String = "$path#$execution charges=$charges totals=$totals"
    }

    /** A checkpoint of the run was saved as number [checkpoint] of the run's history. */
    public class CheckpointSaved internal constructor(run: String, seq: Long, at: Instant, saved: Long, full: Boolean) :
        RunEvent(run, seq, at) {
            /** The checkpoint's sequence number in the run's history. */
            public val checkpoint: Long = saved

            /** Whether it is a full snapshot (true) or a delta against the previous one. */
            public val full: Boolean = full

            override fun describe(): String = "checkpoint=$checkpoint full=$full"
        }

    /**
     * The run paused: a node called `interrupt`, or the run was drained. Resumable. Terminal: [result]'s
     * [RunResult.interrupts] holds the nodes' payloads (empty when drained).
     */
    public class RunInterrupted internal constructor(run: String, seq: Long, at: Instant, result: RunResult) :
        Terminal(run, seq, at, result) {
            override fun describe(): String = "interrupts=${result.interrupts}"
        }

    /** The run completed; [result] holds the final state. Terminal. */
    public class RunCompleted internal constructor(run: String, seq: Long, at: Instant, result: RunResult) :
        Terminal(run, seq, at, result) {
            override fun describe(): String = "duration=${result.duration}"
        }

    /** The run failed with [error]. Terminal. */
    public class RunFailed internal constructor(
        runId: String,
        sequence: Long,
        timestamp: Instant,
        /** The first failure. */
        public val error: Throwable,
        result: RunResult,
    ) : Terminal(runId, sequence, timestamp, result) {
        override fun describe(): String = "error=$error"
    }

    /** The run was cancelled. Terminal. */
    public class RunCancelled internal constructor(run: String, seq: Long, at: Instant, result: RunResult) :
        Terminal(run, seq, at, result) {
            override fun describe(): String = "cancelled"
        }
}
