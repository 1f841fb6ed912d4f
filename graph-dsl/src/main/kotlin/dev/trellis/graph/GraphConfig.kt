package dev.trellis.graph

import java.util.Collections
import kotlin.time.Duration

/**
 * The limits and defaults of a graph's runs, set in the builder's `config { }` block.
 *
 * ```kotlin
 * config { maxNodeExecutions = 50; executionTimeout = 5.minutes; maxConcurrency = 8; failFast = true }
 * ```
 */
public class GraphConfig internal constructor(
    /** The most node executions (attempts excluded) one run may start; a runaway loop fails with this limit. */
    public val maxNodeExecutions: Int,
    /** The longest a whole run may take, or null for no limit. */
    @get:JvmSynthetic
    public val executionTimeout: Duration?,
    /** The most nodes running at the same time in one run. */
    public val maxConcurrency: Int,
    /** Whether a failure cancels the nodes still running (true) or lets them finish (false, the default). */
    public val failFast: Boolean,
    /** The timeout of each attempt of nodes that set none, or null for no limit. */
    @get:JvmSynthetic
    public val defaultNodeTimeout: Duration?,
    /** The retry policy of nodes that set none. */
    public val defaultRetry: Retry,
    /** Interceptors of every node, outermost first, inside the run's and outside each node's (`docs/semantics.md` §13). */
    public val interceptors: List<NodeInterceptor> = emptyList(),
    /** The handler of failures of nodes without an error route of their own, or null (`docs/semantics.md` §13.3). */
    public val defaultFailureHandler: String? = null,
    /** The key the default handler's failures are written to, or null. */
    public val defaultFailureKey: StateKey<out NodeError?>? = null,
) {
    override fun toString(): String =
        "GraphConfig(maxNodeExecutions=$maxNodeExecutions, executionTimeout=$executionTimeout, " +
            "maxConcurrency=$maxConcurrency, failFast=$failFast, defaultNodeTimeout=$defaultNodeTimeout, " +
            "defaultRetry=$defaultRetry, " +
            "interceptors=${interceptors.size}" +
            (defaultFailureHandler?.let { ", defaultOnFailure=$it" } ?: "") + ")"

    /** Defaults. */
    public companion object {
        /** The default of [maxNodeExecutions]. */
        public const val DEFAULT_MAX_NODE_EXECUTIONS: Int = 1000

        /** The defaults. */
        @JvmField
        public val DEFAULT: GraphConfig = GraphConfigBuilder().build()
    }
}

/** The mutable block behind `config { }`; validated when the graph is built. */
@TrellisDsl
public class GraphConfigBuilder {
    /** See [GraphConfig.maxNodeExecutions]. */
    public var maxNodeExecutions: Int = GraphConfig.DEFAULT_MAX_NODE_EXECUTIONS

    /** See [GraphConfig.executionTimeout]. */
    @get:JvmSynthetic
    @set:JvmSynthetic
    public var executionTimeout: Duration? = null

    /** See [GraphConfig.maxConcurrency]. */
    public var maxConcurrency: Int = Int.MAX_VALUE

    /** See [GraphConfig.failFast]. */
    public var failFast: Boolean = false

    /** See [GraphConfig.defaultNodeTimeout]. */
    @get:JvmSynthetic
    @set:JvmSynthetic
    public var defaultNodeTimeout: Duration? = null

    /** See [GraphConfig.defaultRetry]. */
    public var defaultRetry: Retry = Retry.NONE

    private val interceptors = ArrayList<NodeInterceptor>()

    /**
     * Wraps every node's attempts in [interceptors]; calls add up, the first installed being the outermost
     * (`docs/semantics.md` §13).
     */
    public fun intercept(vararg interceptors: NodeInterceptor) {
        this.interceptors += interceptors
    }

    internal var failureHandler: String? = null
        private set
    internal var failureKey: StateKey<out NodeError?>? = null
        private set
    internal var failureHandlers = 0
        private set

    /**
     * Routes the failure of every node that declares no error route of its own (except [handler] itself) to
     * [handler], written to [error] as a [NodeError] when given (`docs/semantics.md` §13.3).
     */
    @JvmSynthetic
    public fun defaultOnFailure(handler: NodeRef, error: StateKey<out NodeError?>? = null) {
        failureHandler = handler.id
        failureKey = error
        failureHandlers++
    }

    internal fun problems(): List<String> = buildList {
        if (failureHandlers > 1) {
            add("config: defaultOnFailure is declared $failureHandlers times; keep one.")
        }
        if (maxNodeExecutions < 1) add("config: maxNodeExecutions must be at least 1, but was $maxNodeExecutions.")
        if (maxConcurrency < 1) add("config: maxConcurrency must be at least 1, but was $maxConcurrency.")
        executionTimeout?.let {
            if (!it.isPositive()) add("config: executionTimeout must be positive, but was $it; use null for no limit.")
        }
        defaultNodeTimeout?.let {
            if (!it.isPositive()) {
                add(
                    "config: defaultNodeTimeout must be positive, but was $it; use null for no limit.",
                )
            }
        }
    }

    internal fun build(): GraphConfig =
        GraphConfig(
            maxNodeExecutions,
            executionTimeout,
            maxConcurrency,
            failFast,
            defaultNodeTimeout,
            defaultRetry,
            Collections.unmodifiableList(interceptors.toList()),
            failureHandler,
            failureKey,
        )
}
