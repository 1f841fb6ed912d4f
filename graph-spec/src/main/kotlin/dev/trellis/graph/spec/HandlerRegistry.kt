package dev.trellis.graph.spec

import dev.trellis.graph.CacheKey
import dev.trellis.graph.Compensation
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeBody
import dev.trellis.graph.NodeError
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Reducer
import dev.trellis.graph.State
import dev.trellis.graph.StateSchema
import dev.trellis.graph.TaskError
import kotlinx.serialization.KSerializer
import java.util.IdentityHashMap
import java.util.function.Consumer

/**
 * The code a graph spec may name: node bodies, map tasks, conditions, route selectors, reducers, codecs (value types
 * of state keys), interceptors, compensations, cache keys, retry filters, and the schemas and graphs a spec may
 * reuse. A spec names handlers; loading looks each name up here and never loads a class by its name, so a spec can
 * only run code the application registered.
 *
 * Export maps the other way: a graph's functions are looked up by identity and written by their names, so a graph
 * built with the DSL exports when it uses the registered objects themselves.
 *
 * ```kotlin
 * val registry = handlerRegistry {
 *     schema(Research)
 *     node("plan") { set(Research.plan, "search, then write") }
 *     condition("accepted") { it[Research.review].startsWith("ACCEPT") }
 * }
 * val graph = GraphSpec.load(yaml, registry)
 * ```
 *
 * The built-in reducers are registered as `replace`, `append`, `merge`, `sum`, `sumLong` and `sumDouble`; the codecs
 * `NodeError` and `TaskError` are registered too.
 */
public class HandlerRegistry private constructor(builder: Builder) {
    internal val nodes: Map<String, NodeBody> = LinkedHashMap(builder.nodes)
    internal val tasks: Map<String, suspend NodeScope.(Any?) -> Unit> = LinkedHashMap(builder.tasks)
    internal val conditions: Map<String, (State) -> Boolean> = LinkedHashMap(builder.conditions)
    internal val selectors: Map<String, (State) -> NodeRef> = LinkedHashMap(builder.selectors)
    internal val reducers: Map<String, Reducer<*>> = LinkedHashMap(builder.reducers)
    internal val codecs: Map<String, Pair<KSerializer<*>, Class<*>>> = LinkedHashMap(builder.codecs)
    internal val interceptors: Map<String, NodeInterceptor> = LinkedHashMap(builder.interceptors)
    internal val compensations: Map<String, Compensation> = LinkedHashMap(builder.compensations)
    internal val cacheKeys: Map<String, CacheKey> = LinkedHashMap(builder.cacheKeys)
    internal val retryFilters: Map<String, (Throwable) -> Boolean> = LinkedHashMap(builder.retryFilters)
    internal val schemas: Map<String, StateSchema> = LinkedHashMap(builder.schemas)
    internal val graphs: Map<String, Graph> = LinkedHashMap(builder.graphs)

    private val names = IdentityHashMap<Any, String>().apply {
        listOf(nodes, tasks, conditions, selectors, reducers, interceptors, compensations, cacheKeys, retryFilters)
            .forEach { kind -> kind.forEach { (name, handler) -> putIfAbsent(handler, name) } }
    }

    /** The name [handler] (a registered function or object) was registered under, or null. */
    public fun nameOf(handler: Any): String? = names[handler]

    /** The node body registered as [name]. @throws NoSuchElementException naming the registered ones. */
    public fun node(name: String): NodeBody = lookup(nodes, name, "node")

    /** The condition registered as [name]. @throws NoSuchElementException naming the registered ones. */
    public fun condition(name: String): (State) -> Boolean = lookup(conditions, name, "condition")

    /** The route selector registered as [name]. @throws NoSuchElementException naming the registered ones. */
    public fun selector(name: String): (State) -> NodeRef = lookup(selectors, name, "selector")

    /** The map task registered as [name]. @throws NoSuchElementException naming the registered ones. */
    public fun task(name: String): suspend NodeScope.(Any?) -> Unit = lookup(tasks, name, "task")

    private fun <T> lookup(map: Map<String, T>, name: String, kind: String): T = map[name]
        ?: throw NoSuchElementException(
            "No $kind is registered as '$name'; register it with $kind(\"$name\", ...) or use one of ${map.keys}.",
        )

    override fun toString(): String =
        "HandlerRegistry(nodes=${nodes.keys}, conditions=${conditions.keys}, selectors=${selectors.keys})"

    /** Registers handlers by name; [build] checks that no name of a kind is registered twice. */
    public class Builder internal constructor() {
        internal val nodes = LinkedHashMap<String, NodeBody>()
        internal val tasks = LinkedHashMap<String, suspend NodeScope.(Any?) -> Unit>()
        internal val conditions = LinkedHashMap<String, (State) -> Boolean>()
        internal val selectors = LinkedHashMap<String, (State) -> NodeRef>()
        internal val reducers = LinkedHashMap<String, Reducer<*>>()
        internal val codecs = LinkedHashMap<String, Pair<KSerializer<*>, Class<*>>>()
        internal val interceptors = LinkedHashMap<String, NodeInterceptor>()
        internal val compensations = LinkedHashMap<String, Compensation>()
        internal val cacheKeys = LinkedHashMap<String, CacheKey>()
        internal val retryFilters = LinkedHashMap<String, (Throwable) -> Boolean>()
        internal val schemas = LinkedHashMap<String, StateSchema>()
        internal val graphs = LinkedHashMap<String, Graph>()
        private val problems = ArrayList<String>()

        init {
            reducer("replace", Reducer.replace<Any?>())
            reducer("append", Reducer.append<Any?>())
            reducer("merge", Reducer.merge<Any?, Any?>())
            reducer("sum", Reducer.sum())
            reducer("sumLong", Reducer.sumLong())
            reducer("sumDouble", Reducer.sumDouble())
            codec("NodeError", NodeError.serializer(), NodeError::class.java)
            codec("TaskError", TaskError.serializer(), TaskError::class.java)
        }

        private fun <T> put(map: MutableMap<String, T>, kind: String, name: String, value: T): Builder = apply {
            if (!NAME.matches(name)) {
                problems += "$kind name '$name' is not a name a spec can use; use letters, digits, '_', '-' and '.'."
            } else if (map.putIfAbsent(name, value) != null) {
                problems += "$kind '$name' is registered twice; register each name once."
            }
        }

        /** Registers the node body [body] as [name] (`handler: name` in a spec). */
        public fun node(name: String, body: NodeBody): Builder = put(nodes, "node", name, body)

        /** Registers a Java node [action] as [name]; it runs on the node's thread with the node's scope and must not block. */
        public fun nodeAction(name: String, action: Consumer<NodeScope>): Builder =
            node(name) { action.accept(this) }

        /** Registers the map task [task] as [name] (`map: { handler: name }` in a spec); it gets each item. */
        public fun task(name: String, task: suspend NodeScope.(item: Any?) -> Unit): Builder =
            put(tasks, "task", name, task)

        /** Registers [condition] as [name], for conditional edges and first-match routes (`when: name`). */
        public fun condition(name: String, condition: (State) -> Boolean): Builder =
            put(conditions, "condition", name, condition)

        /** Registers the route [selector] as [name] (`route: name`): it picks one of the route's targets. */
        public fun selector(name: String, selector: (State) -> NodeRef): Builder =
            put(selectors, "selector", name, selector)

        /** Registers [reducer] as [name] (`reducer: name` of a state key). */
        public fun reducer(name: String, reducer: Reducer<*>): Builder = put(reducers, "reducer", name, reducer)

        /** Registers a value type as [name] (`type: name` of a state key): its [serializer] and [valueClass]. */
        public fun codec(name: String, serializer: KSerializer<*>, valueClass: Class<*>): Builder =
            put(codecs, "codec", name, serializer to valueClass)

        /** Registers [interceptor] as [name] (`interceptors: [name]` of a node or of the config). */
        public fun interceptor(name: String, interceptor: NodeInterceptor): Builder =
            put(interceptors, "interceptor", name, interceptor)

        /** Registers [compensation] as [name] (`compensation: name` of a node). */
        public fun compensation(name: String, compensation: Compensation): Builder =
            put(compensations, "compensation", name, compensation)

        /** Registers the cache [key] function as [name] (`cache: { key: name }` of a node). */
        public fun cacheKey(name: String, key: CacheKey): Builder = put(cacheKeys, "cacheKey", name, key)

        /** Registers an error filter as [name] (`retry: { retryOn: name }`): which errors are worth another attempt. */
        public fun retryOn(name: String, filter: (Throwable) -> Boolean): Builder =
            put(retryFilters, "retryOn", name, filter)

        /**
         * Registers [schema] under its name: a spec whose `state.schema` names it uses this schema (the handlers' own
         * keys), and its declared keys are checked against it.
         */
        public fun schema(schema: StateSchema): Builder = put(schemas, "schema", schema.name, schema)

        /**
         * Registers the functions [graph] holds that are not registered yet, under names made from where they are:
         * `<graph>.<node>` for a node's body, `<graph>.<node>.task` for a map node's task, `<graph>.<from>.to.<to>`
         * for an edge's condition, `<graph>.<from>.route` for a route's selector, `<graph>.<from>.match<i>` for a
         * first-match branch's condition, `<graph>.<node>.interceptor<i>`, `.compensation` and `.cacheKey`,
         * `<graph>.interceptor<i>` for the graph's own interceptors — and those
         * of the graphs of its subgraph and map nodes; its schemas too. So a graph built with the Java builder
         * (`JavaGraph`), which wraps each Java lambda in a function of its own, exports to a spec and loads back with
         * this registry.
         *
         * ```java
         * HandlerRegistry registry = HandlerRegistry.builder().handlersOf(graph).build();
         * String yaml = GraphSpec.toYaml(graph, registry);
         * ```
         */
        public fun handlersOf(graph: Graph): Builder = apply { BuiltHandlers.register(this, graph) }

        /** Registers [graph] under its id: a spec's subgraph and map nodes may name it (`graph: id`). */
        public fun graph(graph: Graph): Builder = put(graphs, "graph", graph.id, graph)

        /** The registry. @throws IllegalArgumentException listing every name registered twice or unusable. */
        public fun build(): HandlerRegistry {
            require(problems.isEmpty()) {
                "The handler registry is " +
                    "invalid:\n" + problems.joinToString("\n") { "  - $it" }
            }
            return HandlerRegistry(this)
        }
    }

    /** Factories. */
    public companion object {
        internal val NAME = Regex("[A-Za-z0-9_.-]+")

        /** A builder of a registry, with the built-in reducers and codecs already registered. */
        @JvmStatic
        public fun builder(): Builder = Builder()
    }
}

/** Builds a [HandlerRegistry] with [block]. */
public fun handlerRegistry(block: HandlerRegistry.Builder.() -> Unit): HandlerRegistry =
    HandlerRegistry.builder().apply(block).build()
