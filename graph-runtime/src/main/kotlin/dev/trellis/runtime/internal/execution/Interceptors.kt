package dev.trellis.runtime.internal.execution

import dev.trellis.graph.Graph
import dev.trellis.graph.Node
import dev.trellis.graph.NodeBody
import dev.trellis.graph.NodeChain
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeScope
import dev.trellis.graph.NodeWrites
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.internal.policies.CacheInterceptor
import dev.trellis.runtime.internal.policies.requireCache

/*
 * Interceptors (`docs/semantics.md` §13): each attempt of a node with interceptors runs its chain — the run's
 * interceptors, then the graph's, then the node's, then the body — instead of the bare body. A run with none pays a
 * null check per attempt and nothing else: no table, no chain objects, no copies of the writes.
 */

/** The scope an attempt's body runs with, whose buffered writes an interceptor chain can read and replace. */
internal interface AttemptScope : NodeScope {
    /** Drops the writes buffered so far. */
    fun clearWrites()

    /** The writes buffered so far, in order, as an immutable copy. */
    fun copyWrites(): NodeWrites

    /** The execution this attempt belongs to. */
    val execution: Execution

    /** A slice violation the body caught (`docs/semantics.md` §12): the attempt fails with it. */
    val violation: Throwable?

    /** Sends an event of this attempt's execution, unless the attempt was abandoned (then it throws). */
    suspend fun sendNodeEvent(event: (sequence: Long) -> RunEvent)
}

/**
 * The interceptors of each node of [graph] in a run with [options], outermost first, by node index; an entry is null
 * for a node without any, and the table is null when no node has any.
 */
internal fun interceptorTable(
    graph: Graph,
    options: RunOptions,
    runtime: GraphRuntime = StartCosts.runtimeOf(graph.topology),
): Array<Array<NodeInterceptor>?>? {
    val outer = options.interceptors.size + graph.config.interceptors.size
    val nodes = graph.nodes
    if (outer == 0 && !runtime.nodesIntercepted) return null
    return Array(nodes.size) { i ->
        val node = nodes[i]
        val own = node.interceptors
        // The cache is the innermost interceptor, right around the body (docs/semantics.md §13.5).
        val cache = node.cache?.let { listOf(CacheInterceptor(graph, node, it, requireCache(graph, node, options))) }
        if (outer + own.size == 0 && cache == null) {
            null
        } else {
            (options.interceptors + graph.config.interceptors + own + cache.orEmpty()).toTypedArray()
        }
    }
}

/**
 * The interceptors that wrap each attempt of each map task (those with `wrapsMapTasks`, `docs/semantics.md` §13.1) of
 * each node, by node index, from a run's [table]; null when there are none.
 */
internal fun taskInterceptorTable(table: Array<Array<NodeInterceptor>?>?): Array<Array<NodeInterceptor>?>? {
    if (table == null || table.none { row -> row != null && row.any { it.wrapsMapTasks } }) return null
    return Array(table.size) { i ->
        table[i]?.filter { it.wrapsMapTasks }?.takeIf { it.isNotEmpty() }?.toTypedArray()
    }
}

/**
 * Runs one attempt of [node] ([body]) with [scope] through [interceptors] (the bare body when null), then leaves in [scope]
 * exactly the writes the outermost interceptor returned.
 */
internal suspend fun runIntercepted(
    scope: AttemptScope,
    node: Node,
    body: NodeBody,
    interceptors: Array<NodeInterceptor>?,
) {
    if (interceptors == null) {
        body(scope)
        return
    }
    val writes: NodeWrites? = interceptors[0].intercept(Link(scope, node, body, interceptors, 1))
    // Declared non-null, but a Java interceptor can still return null.
    writes ?: throw NullPointerException(
        "An interceptor of node '${node.id}' returned null; return the writes of chain.proceed(), or NodeWrites.EMPTY.",
    )
    scope.clearWrites()
    for (i in 0 until writes.size) {
        @Suppress("UNCHECKED_CAST")
        scope.set(writes.keyAt(i) as StateKey<Any?>, writes.valueAt(i))
    }
}

/** The chain from interceptor [next] on: [proceed] calls it, or the body once every interceptor is in. */
internal class Link(
    val scope: AttemptScope,
    override val node: Node,
    private val body: NodeBody,
    private val interceptors: Array<NodeInterceptor>,
    private val next: Int,
) : NodeChain {
    override val nodeId: String get() = node.id
    override val runId: String get() = scope.runId
    override val attempt: Int get() = scope.attempt
    override val executionCount: Int get() = scope.executionCount
    override val path: String get() = scope.execution.path
    override val task: Int get() = scope.execution.task
    override val state: State get() = scope.state

    override suspend fun proceed(): NodeWrites {
        if (next < interceptors.size) {
            val writes: NodeWrites? = interceptors[next].intercept(Link(scope, node, body, interceptors, next + 1))
            return writes ?: throw NullPointerException(
                "An interceptor of node '${node.id}' returned null; return the writes of chain.proceed(), or NodeWrites.EMPTY.",
            )
        }
        scope.clearWrites()
        body(scope)
        return scope.copyWrites()
    }

    override suspend fun emit(payload: Any) = scope.emit(payload)

    override fun charge(meter: String, amount: Double) = scope.charge(meter, amount)

    override fun toString(): String =
        "NodeChain(${node.id}, attempt ${scope.attempt}, interceptor $next of ${interceptors.size})"
}
