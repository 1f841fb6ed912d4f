package dev.trellis.graph

/**
 * What a node's body sees while it runs: the state at its start, its identity, and ways to write state
 * and stream custom events.
 *
 * Writes are buffered and applied atomically when the node completes; a failed or cancelled attempt
 * applies nothing. Reads see the state at the node's start with the node's own writes applied.
 *
 * ```kotlin
 * node("write") {
 *     val n = get(Research.drafts)
 *     emit(Progress("writing draft ${n + 1}"))
 *     set(Research.drafts, n + 1)
 * }
 * ```
 */
@TrellisDsl
public interface NodeScope {
    /** The id of the run this execution belongs to. */
    public val runId: String

    /** The id of the running node. */
    public val nodeId: String

    /** The attempt number of this execution, 1 for the first. */
    public val attempt: Int

    /** How many times this node has started in this run, this execution included. */
    public val executionCount: Int

    /** The state at the start of this attempt, without this node's writes. */
    public val state: State

    /** The value of [key]: the state at the start of this attempt with this node's own writes folded in. */
    public operator fun <T> get(key: StateKey<T>): T

    /**
     * Writes [value] to [key]. For a key with a reducer the value is an update folded by the reducer;
     * otherwise it replaces the value.
     */
    public fun <T> set(key: StateKey<T>, value: T)

    /**
     * Replaces the value of [key] by [transform] of its current value; only for keys without a reducer
     * (for those, [set] an update instead).
     */
    public fun <T> update(key: StateKey<T>, transform: (T) -> T)

    /**
     * Streams [payload] to the run's collectors as a custom event. Suspends while a slow collector
     * catches up (backpressure), so nothing is dropped.
     */
    public suspend fun emit(payload: Any)

    /**
     * Charges [amount] to the run's meter [meter] (`"tokens"`, `"usd"`): counted in the run's totals when this
     * execution ends, failed attempts included, and checked against the run's budget (`docs/semantics.md` §13.4).
     *
     * @throws IllegalArgumentException when [meter] is blank or [amount] is negative or not finite.
     */
    public fun charge(meter: String, amount: Double)

    /**
     * Pauses the run for human input: the first time, this ends the node's attempt (nothing it wrote is kept),
     * lets the nodes still running finish, and ends the run `INTERRUPTED` with [payload] in its result and a
     * checkpoint. When the run is resumed with an answer, the node runs again from its start and this call
     * returns the answer. Needs checkpointing (`RunOptions.checkpointing`) to resume in another process.
     *
     * ```kotlin
     * node("approve") {
     *     val answer = interrupt("Publish draft ${get(Doc.drafts)}? (yes/no)")
     *     set(Doc.approved, answer == "yes")
     * }
     * ```
     */
    public fun interrupt(payload: String): String
}

/** The body of a node: suspending code run with a [NodeScope] as receiver. */
public typealias NodeBody = suspend NodeScope.() -> Unit
