package dev.trellis.javaapi

import dev.trellis.graph.ChildInput
import dev.trellis.graph.Graph
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.GraphValidationException
import dev.trellis.graph.JavaBuild
import dev.trellis.graph.NodeBody
import dev.trellis.graph.NodeError
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.TaskInput
import dev.trellis.javaapi.internal.NodeExecutors
import dev.trellis.javaapi.internal.asyncBody
import dev.trellis.javaapi.internal.blockingBody
import dev.trellis.javaapi.internal.blockingInterceptor
import dev.trellis.javaapi.internal.blockingTask
import dev.trellis.javaapi.internal.declareMap
import dev.trellis.javaapi.internal.declareNode
import dev.trellis.javaapi.internal.inlineBody
import dev.trellis.javaapi.internal.inlineTask
import dev.trellis.runtime.agent.agentNode
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import java.time.Duration
import java.util.concurrent.Executor
import java.util.function.Consumer
import java.util.function.Function
import java.util.function.Predicate
import kotlin.time.toKotlinDuration

/**
 * Builds graphs from Java: the same immutable, validated `Graph` as the Kotlin `graph { }` DSL, which it
 * drives. Runs them with [Trellis.runner].
 *
 * ```java
 * StateSchema schema = new StateSchema("ingest");
 * StateKey<Integer> count = Keys.of(schema, "count", Integer.class, 0);
 * Graph graph = JavaGraph.builder("ingest", schema)
 *     .blockingNode("fetch", ctx -> ctx.set(page, download(ctx.get(url))))   // blocks: on the executor
 *     .asyncNode("embed", ctx -> embedder.embedAsync(ctx.get(page)).thenAccept(v -> ctx.set(vector, v)))
 *     .node("count", ctx -> ctx.update(count, c -> c + 1), NodeOptions.retry(Retry.exponential(3, Duration.ofMillis(200))))
 *     .start("fetch")
 *     .edge("fetch", "embed")
 *     .edge("embed", "count")
 *     .route("count", List.of("fetch", Graph.END), state -> state.get(count) < 3 ? "fetch" : Graph.END)
 *     .maxNodeExecutions(100)
 *     .build();
 * ```
 */
public object JavaGraph {
    /** A builder of graph [id] over [schema]. */
    @JvmStatic
    public fun builder(id: String, schema: StateSchema): Builder = Builder(id, schema)

    /** A builder of graph [id] with a new, empty schema named [id]; declare its keys on `builder.getSchema()`. */
    @JvmStatic
    public fun builder(id: String): Builder = Builder(id, StateSchema(id))

    /**
     * The mutable builder behind [JavaGraph.builder]. It records declarations; [build] validates them all at
     * once (reporting every problem in one `GraphValidationException`) and returns an immutable graph. A
     * builder may build several graphs; later changes do not affect graphs already built.
     */
    public class Builder internal constructor(
        private val id: String,
        /** The schema of the graph being built; declare keys on it (see [Keys]) before [build]. */
        public val schema: StateSchema,
    ) {
        private val declarations = ArrayList<GraphBuilder.(CoroutineDispatcher) -> Unit>()
        private var executor: Executor? = null

        /**
         * Runs blocking nodes on [executor] (null for the default: virtual threads on JDK 21+, else a shared
         * cached pool of daemon threads). Cancelled nodes are interrupted, so the executor must run each task
         * on a thread of its own while it runs (a pool, not a caller-runs executor).
         */
        public fun executor(executor: Executor?): Builder = apply { this.executor = executor }

        /**
         * Declares a node [id] whose [action] does not block: computing, reading and writing state, emitting
         * events. It runs inline on the run's own thread, like a Kotlin node: no thread hop, no executor. It must not
         * block (no I/O, `Thread.sleep`, locks held long, blocking LLM clients): a blocked node holds one of the
         * few threads of the shared coroutine pool. Such work belongs in [blockingNode] (or [asyncNode]). A running
         * `node` is not interrupted when the run is cancelled; it runs to its end and its writes are dropped.
         */
        public fun node(id: String, action: NodeAction): Builder = node(id, action, NodeOptions.DEFAULT)

        /** As `node(id, action)`, with [options]. */
        public fun node(id: String, action: NodeAction, options: NodeOptions): Builder =
            declare { declareNode(id, options, inlineBody(action)) }

        /**
         * Declares a node [id] whose [action] blocks (I/O, a blocking HTTP or LLM client, `Thread.sleep`): it runs
         * on the graph's [executor] — by default a virtual thread per execution on JDK 21+, else a shared cached
         * pool — so it never holds a thread other branches need, and parallel blocking nodes really run at the same
         * time. When the run is cancelled or the node times out, its thread is interrupted.
         */
        public fun blockingNode(id: String, action: NodeAction): Builder = blockingNode(id, action, NodeOptions.DEFAULT)

        /** As `blockingNode(id, action)`, with [options]. */
        public fun blockingNode(id: String, action: NodeAction, options: NodeOptions): Builder =
            declare { dispatcher -> declareNode(id, options, blockingBody(action, dispatcher)) }

        /**
         * Declares a node [id] whose [action] starts work and returns a stage that completes when it is done (an
         * async HTTP or LLM client): the action runs on the run's own thread and must not block; the node waits for
         * the stage without holding a thread.
         */
        public fun asyncNode(id: String, action: AsyncNodeAction): Builder = asyncNode(id, action, NodeOptions.DEFAULT)

        /** Declares a non-blocking node [id] with [options]. */
        public fun asyncNode(id: String, action: AsyncNodeAction, options: NodeOptions): Builder =
            declare { declareNode(id, options, asyncBody(action)) }

        /**
         * Declares a node [id] that calls [agent] with the prompt [prompt] builds from the state and writes the reply
         * to [output]. Each call is isolated from every other call of the same agent (see [AsyncAgent]); the tokens
         * and steps it streams become custom events of the node (`AgentEvent`).
         */
        public fun agentNode(
            id: String,
            agent: AsyncAgent,
            output: StateKey<String>,
            prompt: Function<State, String>,
        ): Builder =
            agentNode(id, agent, output, prompt, NodeOptions.DEFAULT)

        /** As `agentNode(id, agent, output, prompt)`, with [options]. */
        public fun agentNode(
            id: String,
            agent: AsyncAgent,
            output: StateKey<String>,
            prompt: Function<State, String>,
            options: NodeOptions,
        ): Builder {
            require(options.cacheOrNull == null) {
                "Agent node '$id' cannot be cached (its turns are a conversation, not one result); drop " +
                    "NodeOptions.cache for it, or cache the nodes around it."
            }
            val adapted = agent.asAgent()
            return declare {
                agentNode(
                    id,
                    adapted,
                    output,
                    options.timeoutOrNull?.toKotlinDuration(),
                    options.retryOrNull,
                    options.descriptionOrNull,
                    reads = options.readsOrNull,
                    writes = options.writesOrNull,
                ) { prompt.apply(it) }
            }
        }

        /**
         * Declares a subgraph node [id] with no mapping: each execution runs [graph] as a child run from its schema's
         * initial state and writes nothing back (`docs/semantics.md` §11).
         */
        public fun subgraph(id: String, graph: Graph): Builder = subgraph(id, graph, Consumer {}, NodeOptions.DEFAULT)

        /**
         * Declares a subgraph node [id]: each execution runs [graph] as a child run, its input built from this
         * graph's state and its final state written back as declared by [mapping] (`docs/semantics.md` §11). The
         * child's events appear in the run's stream with paths (`research/web`); an interrupt inside it is
         * answered by its path (`research/approve`).
         *
         * ```java
         * builder.subgraph("research", researchGraph, m -> m
         *     .input(plan.topic, research.question)
         *     .output(research.answer, plan.findings));
         * ```
         */
        public fun subgraph(id: String, graph: Graph, mapping: Consumer<ChildMapping<ChildInput>>): Builder =
            subgraph(id, graph, mapping, NodeOptions.DEFAULT)

        /**
         * As `subgraph(id, graph, mapping)`, with [options]: its timeout bounds each attempt (one child run), its
         * retry policy runs the whole child run again.
         */
        public fun subgraph(
            id: String,
            graph: Graph,
            mapping: Consumer<ChildMapping<ChildInput>>,
            options: NodeOptions,
        ): Builder {
            val declared = ChildMapping<ChildInput>().also { mapping.accept(it) }
            return declare {
                subgraph(
                    id,
                    graph,
                    options.timeoutOrNull?.toKotlinDuration(),
                    options.retryOrNull,
                    options.descriptionOrNull,
                    options.cacheOrNull,
                ) { declared.applyTo(this) }
            }
        }

        /**
         * Declares a map node [id]: each execution runs [task] once per item of the list in [over] (dynamic
         * fan-out) and merges the tasks' writes in task order; its successors run once, after every task
         * (`docs/semantics.md` §11). Like a `node`, the task must not block: it runs inline on the run's own thread
         * (blocking tasks belong in [blockingMap]). Events of task `i` have path `id[i]`.
         *
         * ```java
         * builder.map("summarize", docs, (ctx, doc) -> ctx.set(summaries, List.of(summarize(doc))));
         * ```
         */
        public fun <T> map(id: String, over: StateKey<out List<T>>, task: MapTask<T>): Builder =
            map(id, over, task, MapOptions.DEFAULT)

        /** As `map(id, over, task)`, with [options] (concurrency, failure policy, retry and timeout per task). */
        public fun <T> map(id: String, over: StateKey<out List<T>>, task: MapTask<T>, options: MapOptions): Builder =
            declare { declareMap(id, over, options, inlineTask(task)) }

        /**
         * Declares a map node [id] whose [task] blocks (I/O, a blocking client): like [map], but each task runs on
         * the graph's [executor], like a [blockingNode], and is interrupted when the map is cancelled or the task
         * times out. At most `options.maxConcurrency` tasks hold a thread at once.
         */
        public fun <T> blockingMap(id: String, over: StateKey<out List<T>>, task: MapTask<T>): Builder =
            blockingMap(id, over, task, MapOptions.DEFAULT)

        /** As `blockingMap(id, over, task)`, with [options]. */
        public fun <T> blockingMap(
            id: String,
            over: StateKey<out List<T>>,
            task: MapTask<T>,
            options: MapOptions,
        ): Builder = declare { dispatcher -> declareMap(id, over, options, blockingTask(task, dispatcher)) }

        /**
         * Declares a map node [id] whose tasks are child runs of [graph], one per item of the list in [over], each
         * mapped by [mapping] (its input block sees the task's item, `in.getItem()`, and index); otherwise like
         * [map]. Events of the child run of task `i` have paths `id[i]/node`.
         *
         * ```java
         * builder.map("research", plan.questions, researchGraph, m -> m
         *     .input(in -> in.set(research.question, in.getItem()))
         *     .output(research.answer, plan.findings));
         * ```
         */
        public fun <T> map(
            id: String,
            over: StateKey<out List<T>>,
            graph: Graph,
            mapping: Consumer<ChildMapping<TaskInput<T>>>,
        ): Builder = map(id, over, graph, mapping, MapOptions.DEFAULT)

        /** As `map(id, over, graph, mapping)`, with [options]; the retry policy runs a task's whole child run again. */
        public fun <T> map(
            id: String,
            over: StateKey<out List<T>>,
            graph: Graph,
            mapping: Consumer<ChildMapping<TaskInput<T>>>,
            options: MapOptions,
        ): Builder {
            val declared = ChildMapping<TaskInput<T>>().also { mapping.accept(it) }
            return declare {
                map(
                    id,
                    over,
                    graph,
                    options.maxConcurrency,
                    options.taskFailure,
                    options.errorsOrNull,
                    options.timeoutOrNull?.toKotlinDuration(),
                    options.retryOrNull,
                    options.descriptionOrNull,
                ) { declared.applyTo(this) }
            }
        }

        /** Makes [nodeIds] the entry points: they are ready when a run starts. */
        public fun start(vararg nodeIds: String): Builder {
            val refs = nodeIds.map { NodeRef.of(it) }.toTypedArray()
            return declare { start(*refs) }
        }

        /** Adds an edge always taken from [from] to [to]. */
        public fun edge(from: String, to: String): Builder = declare { NodeRef.of(from) then NodeRef.of(to) }

        /** Adds an edge from [from] to [to], taken when [condition] holds on the merged state (several may: fan-out). */
        public fun edge(from: String, to: String, condition: Predicate<State>): Builder =
            declare { NodeRef.of(from).then(NodeRef.of(to)) { condition.test(it) } }

        /**
         * Adds a route from [from]: [selector] picks exactly one of [targets] (node ids, or `Graph.END`) on the
         * merged state. Selecting a target that is not in [targets] fails the node.
         */
        public fun route(from: String, targets: List<String>, selector: Function<State, String>): Builder {
            val refs = targets.map { NodeRef.of(it) }.toTypedArray()
            return declare { NodeRef.of(from).route(*refs) { NodeRef.of(selector.apply(it)) } }
        }

        /**
         * Routes [from] first-match (`docs/semantics.md` §13.2): the conditions declared by [routes] are tried in order
         * on the merged state and the first that holds wins; they must end with `otherwise(target)`,
         * `otherwise(Graph.END)` (the path may end there) or `otherwiseFail()`.
         *
         * ```java
         * builder.firstMatch("review", routes -> routes
         *     .on("publish", s -> s.get(approved))
         *     .on("write", s -> s.get(drafts) < 3)
         *     .otherwiseFail());
         * ```
         */
        public fun firstMatch(from: String, routes: Consumer<FirstMatchRoutes>): Builder {
            val declared = FirstMatchRoutes().also { routes.accept(it) }
            return declare { NodeRef.of(from).firstMatch { declared.applyTo(this) } }
        }

        /**
         * Routes the failures of [nodeId] (after its retries) to node [handler] instead of failing the run
         * (`docs/semantics.md` §13.3).
         */
        public fun onFailure(nodeId: String, handler: String): Builder =
            declare { NodeRef.of(nodeId).onFailure(NodeRef.of(handler)) }

        /**
         * As `onFailure(nodeId, handler)`, writing each failure to [error] (see [Keys.nodeError]) for the handler to
         * read.
         */
        public fun onFailure(nodeId: String, handler: String, error: StateKey<NodeError>): Builder =
            declare { NodeRef.of(nodeId).onFailure(NodeRef.of(handler), error) }

        /** Routes the failures of every node without an error route of its own (except [handler]) to [handler]. */
        public fun defaultOnFailure(handler: String): Builder =
            declare { config { defaultOnFailure(NodeRef.of(handler)) } }

        /** As `defaultOnFailure(handler)`, writing each failure to [error] (see [Keys.nodeError]). */
        public fun defaultOnFailure(handler: String, error: StateKey<NodeError>): Builder =
            declare { config { defaultOnFailure(NodeRef.of(handler), error) } }

        /**
         * Wraps every node's attempts in [interceptor]; calls add up, the first installed being the outermost. It runs
         * on the graph's [executor].
         */
        public fun intercept(interceptor: JavaNodeInterceptor): Builder =
            declare { dispatcher -> config { intercept(blockingInterceptor(interceptor, dispatcher)) } }

        /**
         * Wraps the attempts of node [nodeId] in [interceptor], inside the graph's interceptors; calls add up, the
         * first installed being the outermost. It runs on the graph's [executor].
         */
        public fun intercept(nodeId: String, interceptor: JavaNodeInterceptor): Builder =
            declare { dispatcher -> NodeRef.of(nodeId).intercept(blockingInterceptor(interceptor, dispatcher)) }

        /**
         * Declares [compensation] as what undoes each completed execution of node [nodeId] when the run fails: in
         * reverse completion order, each at most once, with the state right after it (`docs/semantics.md` §13.6).
         * One per node. It runs on the graph's [executor].
         */
        public fun compensate(nodeId: String, compensation: JavaCompensation): Builder =
            declare { dispatcher -> NodeRef.of(nodeId).compensate(blockingCompensation(compensation, dispatcher)) }

        /** Sets the most node executions one run may start (default 1000). */
        public fun maxNodeExecutions(max: Int): Builder = declare { config { maxNodeExecutions = max } }

        /** Sets the longest a run may take; null for no limit (the default). */
        public fun executionTimeout(timeout: Duration?): Builder =
            declare { config { executionTimeout = timeout?.toKotlinDuration() } }

        /** Sets the most nodes running at the same time in one run (default: no limit). */
        public fun maxConcurrency(max: Int): Builder = declare { config { maxConcurrency = max } }

        /** Whether a failure cancels the nodes still running (true) or lets them finish (false, the default). */
        public fun failFast(failFast: Boolean): Builder = declare { config { this.failFast = failFast } }

        /** Sets the timeout of each attempt of nodes that set none; null for no limit (the default). */
        public fun defaultNodeTimeout(timeout: Duration?): Builder =
            declare { config { defaultNodeTimeout = timeout?.toKotlinDuration() } }

        /** Sets the retry policy of nodes that set none (default: no retry). */
        public fun defaultRetry(retry: Retry): Builder = declare { config { defaultRetry = retry } }

        /**
         * Validates every declaration and returns the immutable graph.
         *
         * @throws GraphValidationException listing every problem found.
         */
        public fun build(): Graph = JavaBuild.run { // JavaBuild: the build's error messages name the Java calls
            val dispatcher = executor?.asCoroutineDispatcher() ?: NodeExecutors.defaultDispatcher
            val builder = GraphBuilder(id, schema)
            for (declaration in declarations) builder.declaration(dispatcher)
            builder.build()
        }

        private fun declare(declaration: GraphBuilder.(CoroutineDispatcher) -> Unit): Builder =
            apply { declarations += declaration }

        override fun toString(): String = "JavaGraph.Builder($id, ${declarations.size} declarations)"
    }
}
