package dev.trellis.graph

/**
 * Wraps the attempts of nodes: logging, redaction, metering, caching, fallbacks (`docs/semantics.md` §13).
 *
 * An interceptor sees the node, its attempt and its input state through [NodeChain]. It may call
 * [NodeChain.proceed] to run the rest of the chain (the next interceptor, or the node's body) zero or more times,
 * change the writes it gets back, throw to fail the attempt (the node's retry policy applies), or return writes of
 * its own without proceeding (short-circuit). What it returns is what the attempt wrote.
 *
 * Interceptors are installed per run (`RunOptions.interceptors`), per graph (`config { intercept(...) }`) and per
 * node (`node.intercept(...)`); the first installed is the outermost, and run-level interceptors wrap graph-level
 * ones, which wrap node-level ones. They run in the node's coroutine, inside the attempt: the retry loop calls the
 * whole chain once per attempt, and a node's timeout covers the whole chain of the attempt.
 *
 * ```kotlin
 * val timing = NodeInterceptor { chain ->
 *     val started = System.nanoTime()
 *     try { chain.proceed() } finally { log("${chain.nodeId}: ${(System.nanoTime() - started) / 1000} µs") }
 * }
 * ```
 */
public fun interface NodeInterceptor {
    /** Runs one attempt of [chain]'s node, usually by calling [NodeChain.proceed]; returns the attempt's writes. */
    public suspend fun intercept(chain: NodeChain): NodeWrites

    /**
     * Whether this interceptor also wraps each attempt of each **task** of a map node it wraps (`docs/semantics.md`
     * §13.1), not only the map node's execution as a whole; false by default. A task's chain has [NodeChain.task] ≥ 0
     * and its path (`summarize[3]`); tracing uses it to make a task's span current in the task's body.
     */
    public val wrapsMapTasks: Boolean get() = false
}

/**
 * One attempt of a node as an interceptor sees it: what runs, and [proceed] to run it.
 *
 * Exceptions thrown by [proceed] are the node's (or a later interceptor's): rethrow those you do not handle. In
 * particular a `CancellationException` (the run is cancelled, or the attempt timed out) must be rethrown, and so
 * must the exception a node's `interrupt` throws to pause the run.
 */
public interface NodeChain {
    /** The node being run. */
    public val node: Node

    /** The id of the node being run. */
    public val nodeId: String

    /** The id of the run. */
    public val runId: String

    /** The attempt number of this execution, 1 for the first. */
    public val attempt: Int

    /** How many times this node has started in this run, this execution included. */
    public val executionCount: Int

    /**
     * Where the execution is in the run, as the `path` of its events (`docs/semantics.md` §11): the node's id for a
     * node of the run's own graph, `research/web` for node `web` of the child run of subgraph node `research`,
     * `research[3]/web` in the child run of map task 3. Lets a run-level interceptor tell the nodes of child runs
     * apart.
     */
    public val path: String get() = nodeId

    /**
     * The index of the map task this attempt belongs to, or -1 when the attempt is a node's own (see
     * [NodeInterceptor.wrapsMapTasks]; `docs/semantics.md` §11).
     */
    public val task: Int get() = -1

    /** The node's input: the state at the start of this attempt. */
    public val state: State

    /**
     * Runs the rest of the chain — the next interceptor, or the node's body — and returns its writes. Each call
     * starts from no writes: the writes of an earlier call are not kept unless returned.
     */
    public suspend fun proceed(): NodeWrites

    /** Streams [payload] to the run's collectors as a custom event of this node, like `NodeScope.emit`. */
    public suspend fun emit(payload: Any)

    /** Charges [amount] to the run's meter [meter] for this execution, like `NodeScope.charge` (§13.4). */
    public fun charge(meter: String, amount: Double)
}
