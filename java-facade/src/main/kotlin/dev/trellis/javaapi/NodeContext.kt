package dev.trellis.javaapi

import dev.trellis.graph.NodeScope
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.runBlocking
import java.util.function.UnaryOperator

/**
 * What a node of a [JavaGraph] sees while it runs: the state at its start, its identity, and ways to write
 * state and stream custom events. The Java form of the runtime's `NodeScope`.
 *
 * Writes are buffered and applied atomically when the node completes; a failed or cancelled attempt applies
 * nothing. Reads see the state at the attempt's start with the node's own writes applied. A context is
 * valid only while its attempt runs.
 *
 * ```java
 * builder.node("count", ctx -> {
 *     ctx.emit("counting in " + ctx.nodeId());
 *     ctx.update(count, c -> c + 1);
 * });
 * ```
 */
public class NodeContext internal constructor(private val scope: NodeScope, private val job: Job) {
    /** The id of the run this execution belongs to. */
    public fun runId(): String = scope.runId

    /** The id of the running node. */
    public fun nodeId(): String = scope.nodeId

    /** The attempt number of this execution, 1 for the first. */
    public fun attempt(): Int = scope.attempt

    /** How many times this node has started in this run, this execution included. */
    public fun executionCount(): Int = scope.executionCount

    /** The state at the start of this attempt, without this node's writes. */
    public fun state(): State = scope.state

    /** The value of [key], with this node's own writes folded in. @throws NoSuchElementException if it has none. */
    public fun <T> get(key: StateKey<T>): T = scope[key]

    /** Writes [value] to [key]; for a key with a reducer the value is an update folded by the reducer. */
    public fun <T> set(key: StateKey<T>, value: T) {
        scope.set(key, value)
    }

    /** Replaces the value of [key] by [transform] of its current value; only for keys without a reducer. */
    public fun <T> update(key: StateKey<T>, transform: UnaryOperator<T>) {
        scope.update(key) { transform.apply(it) }
    }

    /**
     * Streams [payload] to the run's subscribers as a `RunEvent.Custom`. Blocks while a slow subscriber catches
     * up (backpressure, nothing is dropped); when the run is cancelled meanwhile it throws a
     * `CancellationException`. From an [AsyncNodeAction], call it on your own threads, not in the action itself.
     */
    public fun emit(payload: Any) {
        // A supervisor child of the node's job: cancelling the node cancels the wait, but a failure of the
        // wait does not cancel the node (it is thrown to the caller instead).
        val guard = SupervisorJob(job)
        try {
            runBlocking(guard) { scope.emit(payload) }
        } finally {
            guard.complete()
        }
    }

    /**
     * Pauses the run for human input. The first time, this throws (let it propagate: do not catch it): the
     * attempt ends without its writes, and the run ends `INTERRUPTED` with [payload] in its result and a
     * checkpoint. When the run is resumed with an answer ([TrellisRunner.resumeAsync]), the node runs again
     * from its start and this call returns the answer. Needs [RunSettings.Builder.checkpointing] to resume.
     *
     * ```java
     * String answer = ctx.interrupt("Publish the draft? (yes/no)");
     * ctx.set(approved, answer.equals("yes"));
     * ```
     */
    public fun interrupt(payload: String): String = scope.interrupt(payload)

    override fun toString(): String = "NodeContext(${scope.nodeId}#${scope.executionCount}, attempt=${scope.attempt})"
}
