package dev.trellis.graph

import dev.trellis.graph.internal.BuildNames
import dev.trellis.graph.internal.FailureRoutes
import java.util.Collections
import kotlin.time.Duration

/**
 * Builds an immutable, validated [Graph] of state [schema].
 *
 * ```kotlin
 * val research = graph("research", Research) {
 *     val plan = node("plan") { set(Research.notes, listOf("plan")) }
 *     val write = node("write", timeout = 30.seconds) { update(Research.drafts) { it + 1 } }
 *     start(plan)
 *     plan then write
 *     write.route(write, END) { if (it[Research.drafts] < 3) write else END }
 *     config { maxNodeExecutions = 50 }
 * }
 * ```
 *
 * @throws GraphValidationException listing every problem found, each with how to fix it.
 */
public fun graph(id: String, schema: StateSchema, block: GraphBuilder.() -> Unit): Graph =
    GraphBuilder(id, schema).apply(block).build()

/**
 * The mutable builder behind [graph]. It records declarations; [build] validates them all at once and
 * returns an immutable [Graph].
 */
@TrellisDsl
public class GraphBuilder(
    /** The id of the graph being built. */
    public val id: String,
    /** The state schema of the graph being built. */
    public val schema: StateSchema,
) {
    private val nodes = ArrayList<Node>()
    private val edges = ArrayList<Edge>()
    private val entries = ArrayList<String>()
    private val config = GraphConfigBuilder()
    private val interceptors = LinkedHashMap<String, MutableList<NodeInterceptor>>()
    private val composites = ArrayList<String>()
    private val compensations = LinkedHashMap<String, Compensation>()
    private val compensationProblems = ArrayList<String>()
    private val routing = ArrayList<String>()

    /** The end of a path: route to it to finish, e.g. `review.route(write, END) { ... }`. */
    @Suppress("PropertyName", "ktlint:standard:property-naming")
    public val END: NodeRef get() = NodeRef.END

    /**
     * Declares a node [id] running [body], with an optional per-attempt [timeout], [retry] policy and
     * [description]; returns a handle for wiring edges. [reads] and [writes], when given, are the node's slice
     * ([NodeSlice], `docs/semantics.md` §12): the only keys its body may read and write. [cache], when given, caches
     * its results ([CachePolicy], `docs/semantics.md` §13.5).
     */
    @JvmSynthetic
    public fun node(
        id: String,
        timeout: Duration? = null,
        retry: Retry? = null,
        description: String? = null,
        reads: Set<StateKey<*>>? = null,
        writes: Set<StateKey<*>>? = null,
        cache: CachePolicy? = null,
        body: NodeBody,
    ): NodeRef {
        val slice = if (reads == null && writes == null) null else NodeSlice(reads, writes)
        nodes += Node(id, body, timeout, retry, description, nodes.size, slice = slice, cache = cache)
        return NodeRef.of(id)
    }

    /**
     * Declares a subgraph node [id]: each execution runs [graph] as a child run, its input built from this
     * graph's state and its final state written back by [mapping] (`docs/semantics.md` §11). [timeout] bounds
     * each attempt (one child run); [retry] runs the whole child run again; [cache] caches the child run's output
     * writes (`docs/semantics.md` §13.5).
     *
     * ```kotlin
     * val research = subgraph("research", researchGraph) {
     *     input(Plan.topic, Research.question)
     *     output(Research.answer, Plan.findings)
     * }
     * ```
     */
    @JvmSynthetic
    public fun subgraph(
        id: String,
        graph: Graph,
        timeout: Duration? = null,
        retry: Retry? = null,
        description: String? = null,
        cache: CachePolicy? = null,
        mapping: SubgraphMapping.() -> Unit = {},
    ): NodeRef {
        val spec = SubgraphMapping(schema, graph.schema).apply(mapping)
        spec.problems.forEach { composites += "Subgraph node '$id' $it" }
        val composite = Composite.Subgraph(graph, spec)
        nodes +=
            Node(
                id,
                { (this as CompositeScope).runSubgraph(composite) },
                timeout,
                retry,
                description,
                nodes.size,
                composite,
                spec.slice(emptyList(), emptyList()),
                cache = cache,
            )
        return NodeRef.of(id)
    }

    /**
     * Declares a map node [id]: each execution runs [task] once per item of the list in [over] (dynamic fan-out),
     * at most [maxConcurrency] at once, and merges the tasks' writes in task order; its successors run once, after
     * every task (`docs/semantics.md` §11). [timeout] and [retry] apply to each task; [onTaskFailure] says what a
     * failed task does, [errors] receives the failures under [TaskFailure.COLLECT]; [cache] caches the writes of
     * all the tasks of an execution (`docs/semantics.md` §13.5).
     *
     * ```kotlin
     * val summarize = map("summarize", over = Docs.items, maxConcurrency = 8) { doc ->
     *     set(Docs.summaries, listOf(doc.take(40)))
     * }
     * ```
     */
    @JvmSynthetic
    public fun <T> map(
        id: String,
        over: StateKey<out List<T>>,
        maxConcurrency: Int = Int.MAX_VALUE,
        onTaskFailure: TaskFailure = TaskFailure.FAIL_FAST,
        errors: StateKey<List<TaskError>>? = null,
        timeout: Duration? = null,
        retry: Retry? = null,
        description: String? = null,
        cache: CachePolicy? = null,
        task: suspend NodeScope.(item: T) -> Unit,
    ): NodeRef {
        @Suppress("UNCHECKED_CAST")
        val body = task as suspend NodeScope.(Any?) -> Unit
        return addMap(
            id,
            over,
            maxConcurrency,
            onTaskFailure,
            errors,
            timeout,
            retry,
            description,
            body,
            null,
            null,
            cache,
        )
    }

    /**
     * Declares a map node [id] whose tasks are child runs of [graph], one per item of the list in [over], each mapped
     * by [mapping] (its input block sees the task's `item`); otherwise like the map node with a task body.
     *
     * ```kotlin
     * val research = map("research", over = Plan.questions, graph = researchGraph, maxConcurrency = 4) {
     *     input { set(Research.question, item) }
     *     output(Research.answer, Plan.findings)
     * }
     * ```
     */
    @JvmSynthetic
    public fun <T> map(
        id: String,
        over: StateKey<out List<T>>,
        graph: Graph,
        maxConcurrency: Int = Int.MAX_VALUE,
        onTaskFailure: TaskFailure = TaskFailure.FAIL_FAST,
        errors: StateKey<List<TaskError>>? = null,
        timeout: Duration? = null,
        retry: Retry? = null,
        description: String? = null,
        cache: CachePolicy? = null,
        mapping: TaskMapping<T>.() -> Unit = {},
    ): NodeRef {
        val spec = TaskMapping<T>(schema, graph.schema).apply(mapping)
        spec.problems.forEach { composites += "Map node '$id' $it" }
        return addMap(
            id,
            over,
            maxConcurrency,
            onTaskFailure,
            errors,
            timeout,
            retry,
            description,
            null,
            graph,
            spec,
            cache,
        )
    }

    private fun addMap(
        id: String,
        over: StateKey<out List<*>>,
        maxConcurrency: Int,
        onTaskFailure: TaskFailure,
        errors: StateKey<List<TaskError>>?,
        timeout: Duration?,
        retry: Retry?,
        description: String?,
        body: (suspend NodeScope.(Any?) -> Unit)?,
        graph: Graph?,
        mapping: TaskMapping<*>?,
        cache: CachePolicy?,
    ): NodeRef {
        if (over.schema !== schema) {
            composites += "Map node '$id' maps over key '${over.name}' of schema '${over.schema.name}'; " +
                "use a key of this graph's schema '${schema.name}'."
        }
        if (errors != null && errors.schema !== schema) {
            composites += "Map node '$id' writes its errors to key '${errors.name}' of schema " +
                "'${errors.schema.name}'; use a key of this graph's schema '${schema.name}'."
        }
        if (maxConcurrency < 1) {
            composites += "Map node '$id' has maxConcurrency $maxConcurrency; it must be at least 1 " +
                "(1 runs the tasks one after another)."
        }
        if (errors != null && onTaskFailure != TaskFailure.COLLECT) {
            composites += "Map node '$id' names an errors key but fails fast, so it never writes it; " +
                "pass ${BuildNames.collectErrors} or drop the errors key."
        }
        val composite = Composite.Map(over, maxConcurrency, onTaskFailure, errors, body, graph, mapping)
        nodes +=
            Node(
                id,
                { (this as CompositeScope).runMap(composite) },
                timeout,
                retry,
                description,
                nodes.size,
                composite,
                mapping?.slice(listOf(over), listOfNotNull(errors)),
                cache = cache,
            )
        return NodeRef.of(id)
    }

    /** Makes [nodes] the entry points: they are ready when a run starts. */
    public fun start(vararg nodes: NodeRef) {
        nodes.mapTo(entries) { it.id }
    }

    /** Adds an edge always taken from this node to [target]. */
    public infix fun NodeRef.then(target: NodeRef) {
        edges += Edge.Plain(id, target.id)
    }

    /** Adds an edge from this node to [target], taken when [condition] holds on the merged state. */
    public fun NodeRef.then(target: NodeRef, condition: (State) -> Boolean) {
        edges += Edge.Conditional(id, target.id, condition)
    }

    /** Adds a route from this node: [selector] picks exactly one of [targets] (which may include END). */
    public fun NodeRef.route(vararg targets: NodeRef, selector: (State) -> NodeRef) {
        edges += Edge.Route(id, targets.map { it.id }.frozen(), selector)
    }

    /**
     * Routes this node first-match (`docs/semantics.md` §13.2): the conditions declared in [block] are tried in order
     * on the merged state and the first that holds wins; the block must end with `otherwise(target)`,
     * `otherwise(END)` or `otherwiseFail()`.
     *
     * ```kotlin
     * review.firstMatch {
     *     on(publish) { it[Doc.approved] }
     *     on(write) { it[Doc.drafts] < 3 }
     *     otherwise(END)
     * }
     * ```
     */
    public fun NodeRef.firstMatch(block: FirstMatchBuilder.() -> Unit) {
        val spec = FirstMatchBuilder().apply(block)
        val problems = spec.problems(id)
        routing += problems
        if (problems.isEmpty()) edges += Edge.FirstMatch(id, spec.branches.toList().frozen(), spec.endings.single())
    }

    /**
     * Routes the failure of this node's executions (after its retries) to [handler] instead of failing the run, and
     * writes it to [error] as a [NodeError] when given (`docs/semantics.md` §13.3).
     */
    @JvmSynthetic
    public fun NodeRef.onFailure(handler: NodeRef, error: StateKey<out NodeError?>? = null) {
        edges += Edge.OnFailure(id, handler.id, error)
    }

    /**
     * Wraps this node's attempts in [interceptors], inside the run's and the graph's; calls add up, the first
     * installed being the outermost (`docs/semantics.md` §13).
     */
    public fun NodeRef.intercept(vararg interceptors: NodeInterceptor) {
        this@GraphBuilder.interceptors.getOrPut(id) { ArrayList() } += interceptors
    }

    /**
     * Declares [compensation] as what undoes each completed execution of this node when the run fails: run in reverse
     * completion order, each at most once, with the state right after that execution (`docs/semantics.md` §13.6).
     * One per node.
     */
    public fun NodeRef.compensate(compensation: Compensation) {
        if (compensations.putIfAbsent(id, compensation) != null) {
            compensationProblems += "compensate: node '$id' has two compensations; declare one that does both."
        }
    }

    /** Sets limits and defaults of the graph's runs. */
    public fun config(block: GraphConfigBuilder.() -> Unit) {
        config.block()
    }

    /**
     * Validates every declaration and returns the immutable graph.
     *
     * @throws GraphValidationException listing every problem found.
     */
    public fun build(): Graph {
        val problems = ArrayList<String>()
        problems += config.problems()
        for (node in interceptors.keys) {
            if (nodes.none { it.id == node }) {
                problems +=
                    "intercept: '$node' is not a node of this graph; declare it with ${BuildNames.node(node)} or fix " +
                    "the name."
            }
        }
        for (node in compensations.keys) {
            if (nodes.none { it.id == node }) {
                problems +=
                    "compensate: '$node' is not a node of this graph; declare it with ${BuildNames.node(node)} " +
                    "or fix the name."
            }
        }
        problems += compensationProblems
        problems += composites
        problems += routing
        val edges = edges + FailureRoutes.defaults(nodes, edges, config)
        problems += FailureRoutes.problems(nodes, edges, schema, config)
        val nodes = nodes.map { it.withPolicies(interceptors[it.id]?.toList().orEmpty(), compensations[it.id]) }
        val topology = Topology.compile(id, schema, nodes, edges, entries.toList(), problems)
        if (topology != null) {
            val maxConcurrency = config.maxConcurrency
            ParallelWrites.find(topology, maxConcurrency).filter { it.definite }.mapTo(problems) { it.problem() }
        }
        if (problems.isNotEmpty() || topology == null) throw GraphValidationException(id, problems)
        schema.freeze()
        return Graph(id, schema, nodes.frozen(), edges.frozen(), entries.distinct().frozen(), config.build(), topology)
    }
}

/** A read-only copy that Java callers cannot change either. */
private fun <T> List<T>.frozen(): List<T> = Collections.unmodifiableList(toList())
