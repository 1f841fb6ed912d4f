package dev.trellis.javaapi

import dev.trellis.graph.NodeScope
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.javaapi.internal.Emitter
import java.util.function.UnaryOperator
import kotlin.coroutines.CoroutineContext

/**
 * What a node of a [JavaGraph] sees while it runs: the state at its start, its identity, and ways to write
 * state and stream custom events. The Java twin of the graph model's `NodeScope`, whose `emit` suspends
 * (`docs/java.md`).
 *
 * Writes are buffered and applied atomically when the node completes; a failed or cancelled attempt applies
 * nothing. Reads see the state at the attempt's start with the node's own writes applied. A context is
 * valid only while its attempt runs.
 *
 * ```java
 * builder.node("count", ctx -> {
 *     ctx.emit("counting in " + ctx.getNodeId());
 *     ctx.update(count, c -> c + 1);
 * });
 * ```
 */
public class JavaNodeScope internal constructor(
    private val scope: NodeScope,
    /** The node coroutine's context: its job and dispatcher. */
    private val coroutineContext: CoroutineContext,
) {
    /** The thread running an action on the run's own threads, while it runs: its emits are deferred, never blocking. */
    @Volatile
    internal var actionThread: Thread? = null

    @Volatile
    private var emitter: Emitter? = null

    /** The id of the run this execution belongs to. */
    public val runId: String get() = scope.runId

    /** The id of the running node. */
    public val nodeId: String get() = scope.nodeId

    /** The attempt number of this execution, 1 for the first. */
    public val attempt: Int get() = scope.attempt

    /** How many times this node has started in this run, this execution included. */
    public val executionCount: Int get() = scope.executionCount

    /** The state at the start of this attempt, without this node's writes. */
    public val state: State get() = scope.state

    /** The value of [key], with this node's own writes folded in. @throws NoSuchElementException if it has none. */
    public fun <T> get(key: StateKey<T>): T = scope[key]

    /** Writes [value] to [key]; for a key with a reducer the value is an update folded by the reducer. */
    public fun <T> set(key: StateKey<T>, value: T) {
        scope.set(key, value)
    }

    /** Replaces the value of [key] by [transform] of its current value; only for keys without a reducer. */
    public fun <T> update(key: StateKey<T>, transform: UnaryOperator<T>) {
        scope.update(key, transform::apply)
    }

    /**
     * Streams [payload] to the run's subscribers as a `RunEvent.Custom`; nothing is dropped, and the events of an
     * execution always come before its completion.
     *
     * In a `node` (and in an async node's action, while it runs) this never blocks: when a subscriber is slow the
     * event waits in memory, and the node's completion waits for it. Anywhere else — a `blockingNode`, the
     * application's own threads — it blocks while a slow subscriber catches up (backpressure), and throws a
     * `CancellationException` when the run is cancelled meanwhile. A node that streams many events to possibly
     * slow subscribers (tokens of a long answer) belongs in a `blockingNode` or an `asyncNode`.
     */
    public fun emit(payload: Any) {
        emitter().emit(payload, deferred = Thread.currentThread() === actionThread)
    }

    private fun emitter(): Emitter = emitter ?: synchronized(this) {
        emitter ?: Emitter(coroutineContext) { scope.emit(it) }.also { emitter = it }
    }

    /** Reports that the action kept the run's thread too long: a deferred event, never blocking. */
    internal fun warnBlocked(blocked: BlockedThreadWarning) {
        emitter().emit(blocked, deferred = true)
    }

    /**
     * Ends the attempt: waits until the events it emitted were delivered, then throws [failure] (the action's own
     * exception, as it is) or, without one, the failure of a deferred send.
     */
    internal suspend fun finish(failure: Throwable?) {
        val emitter = emitter
        if (emitter != null) {
            emitter.finish(failure)
        } else if (failure != null) {
            throw failure
        }
    }

    /**
     * Charges [amount] to the run's meter [meter] (`"tokens"`, `"usd"`): counted in the run's totals when this
     * execution ends, failed attempts included, and checked against the run's [dev.trellis.runtime.Budget]
     * (`docs/semantics.md` §13.4). Never blocks.
     *
     * ```java
     * ctx.charge("tokens", response.usage().totalTokens());
     * ctx.charge("usd", 0.03);
     * ```
     *
     * @throws IllegalArgumentException when [meter] is blank or [amount] is negative or not finite.
     */
    public fun charge(meter: String, amount: Double) {
        scope.charge(meter, amount)
    }

    /**
     * Pauses the run for human input. The first time, this throws (let it propagate: do not catch it): the
     * attempt ends without its writes, and the run ends `INTERRUPTED` with [payload] in its result and a
     * checkpoint. When the run is resumed with an answer ([TrellisRunner.resumeAsync]), the node runs again
     * from its start and this call returns the answer. Needs [JavaRunOptions.Builder.checkpointing] to resume.
     *
     * ```java
     * String answer = ctx.interrupt("Publish the draft? (yes/no)");
     * ctx.set(approved, answer.equals("yes"));
     * ```
     */
    public fun interrupt(payload: String): String = scope.interrupt(payload)

    override fun toString(): String = "JavaNodeScope(${scope.nodeId}#${scope.executionCount}, attempt=${scope.attempt})"
}
