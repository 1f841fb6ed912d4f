package dev.trellis.javaapi

import dev.trellis.graph.NodeWrites
import dev.trellis.graph.State

/**
 * Wraps the attempts of nodes, from Java: logging, redaction, metering, fallbacks — the Java twin of the graph
 * model's `NodeInterceptor`, whose `intercept` suspends (`docs/semantics.md` §13, `docs/java.md`).
 *
 * It may block: it runs on the graph's executor (for one installed with `JavaRunOptions`, the default executor), and
 * [Chain.proceed] blocks until the rest of the chain — the next interceptor, or the node's body, which runs where it
 * always does — has finished. It may call `proceed` zero or more times, change the writes it gets back, throw to fail
 * the attempt (the node's retry policy applies), or return writes of its own without proceeding. What it returns is
 * what the attempt wrote. When the run is cancelled or the attempt times out, its thread is interrupted.
 *
 * Installed per graph (`JavaGraph.Builder.intercept(interceptor)`), per node (`intercept(nodeId, interceptor)`)
 * and per run (`JavaRunOptions.Builder.intercept`); the first installed is the outermost, run-level ones wrap the
 * graph's, which wrap the node's.
 *
 * ```java
 * JavaNodeInterceptor timing = chain -> {
 *     long started = System.nanoTime();
 *     try {
 *         return chain.proceed();
 *     } finally {
 *         log.info(chain.getNodeId() + " took " + (System.nanoTime() - started) / 1000 + " µs");
 *     }
 * };
 * ```
 */
public fun interface JavaNodeInterceptor {
    /** Runs one attempt of [chain]'s node, usually by calling [Chain.proceed]; returns the attempt's writes. */
    @Throws(Exception::class)
    public fun intercept(chain: Chain): NodeWrites

    /**
     * Whether this interceptor also wraps each attempt of each task of a map node it wraps, not only the map node's
     * execution (`docs/semantics.md` §13.1); false unless overridden (`getWrapsMapTasks()` in Java). A task's chain
     * has [Chain.task] ≥ 0.
     */
    public val wrapsMapTasks: Boolean get() = false

    /**
     * One attempt of a node as an [JavaNodeInterceptor] sees it. Exceptions thrown by [proceed] are the node's (or a later
     * interceptor's), as they are: rethrow those you do not handle.
     */
    public interface Chain {
        /** The id of the node being run. */
        public val nodeId: String

        /** The id of the run. */
        public val runId: String

        /** The attempt number of this execution, 1 for the first. */
        public val attempt: Int

        /** How many times this node has started in this run, this execution included. */
        public val executionCount: Int

        /** Where the execution is in the run, as its events' `path`: `research/web`, `summarize[3]`. */
        public val path: String

        /** The index of the map task this attempt belongs to, or -1 for a node's own attempt ([wrapsMapTasks]). */
        public val task: Int

        /** The node's input: the state at the start of this attempt. */
        public val state: State

        /**
         * Runs the rest of the chain and returns its writes, blocking until it is done. Each call starts from no
         * writes. Throws what the rest of the chain threw, or `InterruptedException` when the run is cancelled.
         */
        @Throws(Exception::class)
        public fun proceed(): NodeWrites

        /**
         * Charges [amount] to the run's meter [meter] for this execution, like [JavaNodeScope.charge]
         * (`docs/semantics.md` §13.4), e.g. after [proceed] from what the call cost.
         */
        public fun charge(meter: String, amount: Double)
    }
}
