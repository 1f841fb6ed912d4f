package dev.trellis.graph.spec

import dev.trellis.graph.Composite
import dev.trellis.graph.Edge
import dev.trellis.graph.Graph
import dev.trellis.graph.GraphConfig
import dev.trellis.graph.Mapping
import dev.trellis.graph.Node
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.TaskFailure
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonObjectBuilder
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import kotlin.time.Duration

/**
 * Writes a built graph as a spec document: every function it holds must be registered (looked up by identity) or
 * made by the loader (declarative rules, interrupt nodes); the graphs of its subgraph and map nodes are written
 * under `graphs`, except registered ones, which are referenced by id.
 */
internal class SpecExport(private val registry: HandlerRegistry) {
    private val problems = ArrayList<SpecProblem>()
    private val graphs = LinkedHashMap<String, JsonObject>()
    private val seen = HashMap<String, Graph>()

    fun document(main: Graph): JsonObject {
        collect(main)
        if (problems.isNotEmpty()) throw GraphSpecException(problems)
        return buildJsonObject {
            put("format", GraphSpec.FORMAT)
            put("main", main.id)
            put("graphs", JsonObject(graphs))
        }
    }

    private fun problem(pointer: String, message: String) {
        problems += SpecProblem(pointer, 0, 0, message)
    }

    private fun collect(graph: Graph) {
        val previous = seen.putIfAbsent(graph.id, graph)
        if (previous != null) {
            if (previous !== graph) {
                problem(
                    "/graphs/${graph.id}",
                    "Two different graphs have id '${graph.id}'; " +
                        "give each graph its own id to export them together.",
                )
            }
            return
        }
        for (node in graph.nodes) {
            val child = node.subgraph ?: continue
            if (registry.graphs[child.id] !== child) collect(child)
        }
        graphs[graph.id] = graphJson(graph, "/graphs/${graph.id}")
    }

    private fun graphJson(graph: Graph, at: String): JsonObject = buildJsonObject {
        put("state", state(graph.schema, "$at/state"))
        put("start", JsonArray(graph.entryPoints.map(::JsonPrimitive)))
        put("nodes", JsonObject(graph.nodes.associate { it.id to node(it, "$at/nodes/${it.id}") }))
        val edges = declaredEdges(graph)
        if (edges.isNotEmpty()) put("edges", JsonArray(edges.mapIndexed { i, e -> edge(e, "$at/edges/$i") }))
        val config = config(graph.config, "$at/config")
        if (config.isNotEmpty()) put("config", config)
    }

    private fun state(schema: StateSchema, at: String): JsonObject = buildJsonObject {
        put("schema", schema.name)
        if (schema.version != 1) put("version", schema.version)
        put(
            "keys",
            buildJsonObject {
                for (key in schema.keys) {
                    put(
                        key.name,
                        buildJsonObject {
                            val type = SpecTypes.nameOf(key, registry)
                            if (type == null) {
                                problem(
                                    "$at/keys/${key.name}",
                                    "State key '${key.name}' holds " +
                                        "${key.typeName}, which a spec cannot name; register a codec for it with " +
                                        "codec(\"name\", serializer, class).",
                                )
                            }
                            put("type", type ?: key.typeName)
                            if (key.hasDefault) put("default", StateLoader.encode(key))
                            key.reducer?.let {
                                put(
                                    "reducer",
                                    name(
                                        it,
                                        "$at/keys/${key.name}/reducer",
                                        "reducer of " +
                                            "key '${key.name}'",
                                        "reducer",
                                    ),
                                )
                            }
                        },
                    )
                }
            },
        )
    }

    private fun name(handler: Any, at: String, what: String, kind: String): String =
        registry.nameOf(handler) ?: run {
            problem(
                at,
                "The $what is not registered; register it with $kind(\"name\", ...) and build the graph " +
                    "with the registered object.",
            )
            "?"
        }

    private fun node(node: Node, at: String): JsonObject = buildJsonObject {
        node.description?.let { put("description", it) }
        when (val composite = node.composite) {
            null -> {
                val origin = Origins.of(node.body)
                if (origin !=
                    null
                ) {
                    put("interrupt", origin)
                } else {
                    put("handler", name(node.body, "$at/handler", "body of node '${node.id}'", "node"))
                }
                node.slice?.reads?.let { keys -> put("reads", JsonArray(keys.map { JsonPrimitive(it.name) })) }
                node.slice?.writes?.let { keys -> put("writes", JsonArray(keys.map { JsonPrimitive(it.name) })) }
            }
            is Composite.Subgraph -> put(
                "subgraph",
                buildJsonObject {
                    put("graph", composite.graph.id)
                    mapping(composite.mapping, null, "$at/subgraph")
                },
            )
            is Composite.Map -> put(
                "map",
                buildJsonObject {
                    put("over", composite.over.name)
                    val body = composite.body
                    val graph = composite.graph
                    if (body != null) {
                        put(
                            "handler",
                            name(
                                body,
                                "$at/map/handler",
                                "task of map node " +
                                    "'${node.id}'",
                                "task",
                            ),
                        )
                    }
                    if (graph != null) put("graph", graph.id)
                    composite.mapping?.let { mapping(it, Origins.of(it.inputBlockOrNull ?: Unit), "$at/map") }
                    if (composite.maxConcurrency != Int.MAX_VALUE) put("maxConcurrency", composite.maxConcurrency)
                    if (composite.onTaskFailure == TaskFailure.COLLECT) put("onTaskFailure", "collect")
                    composite.errors?.let { put("errors", it.name) }
                },
            )
        }
        node.timeout?.let { put("timeout", it.toString()) }
        node.retry?.let { put("retry", retry(it)) }
        node.cache?.let { cache ->
            put(
                "cache",
                buildJsonObject {
                    put("key", name(cache.key, "$at/cache/key", "cache key of node '${node.id}'", "cacheKey"))
                    cache.ttl?.let { put("ttl", it.toString()) }
                },
            )
        }
        if (node.interceptors.isNotEmpty()) {
            put(
                "interceptors",
                JsonArray(
                    node.interceptors.map {
                        JsonPrimitive(name(it, "$at/interceptors", "interceptor of node '${node.id}'", "interceptor"))
                    },
                ),
            )
        }
        node.compensation?.let {
            put(
                "compensation",
                name(
                    it,
                    "$at/compensation",
                    "compensation of node " +
                        "'${node.id}'",
                    "compensation",
                ),
            )
        }
    }

    private fun JsonObjectBuilder.mapping(mapping: Mapping, item: JsonElement?, at: String) {
        if (item != null) put("item", item)
        if (mapping.inputBlockOrNull != null && item == null || mapping.outputBlockOrNull != null) {
            problem(
                at,
                "The mapping has an input { } or output { } block, which a spec cannot hold; map keys to " +
                    "keys (input(from, to), output(from, to)) to export it.",
            )
        }
        if (mapping.inputPairs.isNotEmpty()) {
            put(
                "inputs",
                JsonObject(
                    mapping.inputPairs.associate { (p, c) ->
                        p.name to
                            JsonPrimitive(c.name)
                    },
                ),
            )
        }
        if (mapping.outputPairs.isNotEmpty()) {
            put(
                "outputs",
                JsonObject(
                    mapping.outputPairs.associate { (c, p) ->
                        c.name to
                            JsonPrimitive(p.name)
                    },
                ),
            )
        }
    }

    private fun retry(retry: Retry): JsonObject = buildJsonObject {
        put("maxAttempts", retry.maxAttempts)
        put("backoff", retry.backoff.name.lowercase())
        put("initialDelay", retry.initialDelay.toString())
        put("maxDelay", retry.maxDelay.toString())
        if (retry.backoff == Retry.Backoff.EXPONENTIAL) put("multiplier", retry.multiplier)
        if (retry.jitter != 0.0) put("jitter", retry.jitter)
    }

    /** The edges as declared: without those the config's `defaultOnFailure` added at the end. */
    private fun declaredEdges(graph: Graph): List<Edge> {
        val handler = graph.config.defaultFailureHandler ?: return graph.edges
        for (k in 0..graph.edges.size) {
            val prefix = graph.edges.dropLast(k)
            val routed = prefix.filterIsInstance<Edge.OnFailure>().map { it.from }.toSet()
            val expected = graph.nodes.map { it.id }.filter { it != handler && it !in routed }
            val suffix = graph.edges.takeLast(k)
            val defaults = suffix.all {
                it is Edge.OnFailure && it.to == handler && it.error === graph.config.defaultFailureKey
            }
            if (defaults &&
                suffix.map { it.from } == expected
            ) {
                return prefix
            }
        }
        return graph.edges
    }

    private fun target(id: String): String = if (id == Graph.END) "END" else id

    private fun condition(condition: Any, at: String, what: String): JsonElement =
        registry.nameOf(condition)?.let(::JsonPrimitive) ?: Origins.of(condition) ?: run {
            problem(
                at,
                "The $what is not registered; register it with condition(\"name\", ...) and build the " +
                    "graph with the registered function, or write it as a rule.",
            )
            JsonPrimitive("?")
        }

    private fun edge(edge: Edge, at: String): JsonObject = buildJsonObject {
        put("from", edge.from)
        when (edge) {
            is Edge.Plain -> put("to", target(edge.to))
            is Edge.Conditional -> {
                put("to", target(edge.to))
                put("when", condition(edge.condition, "$at/when", "condition of edge ${edge.from} -> ${edge.to}"))
            }
            is Edge.Route -> {
                put("route", name(edge.selector, "$at/route", "selector of the route from '${edge.from}'", "selector"))
                put("targets", JsonArray(edge.targets.map { JsonPrimitive(target(it)) }))
            }
            is Edge.FirstMatch -> {
                put(
                    "firstMatch",
                    JsonArray(
                        edge.branches.mapIndexed { i, b ->
                            buildJsonObject {
                                put("to", target(b.to))
                                put(
                                    "when",
                                    condition(
                                        b.condition,
                                        "$at/firstMatch/$i/when",
                                        "condition of the " +
                                            "first-match route from '${edge.from}' to '${b.to}'",
                                    ),
                                )
                            }
                        },
                    ),
                )
                edge.otherwise?.let { put("otherwise", target(it)) }
            }
            is Edge.OnFailure -> {
                put("onFailure", edge.to)
                edge.error?.let { put("error", it.name) }
            }
        }
    }

    private fun config(config: GraphConfig, at: String): JsonObject = buildJsonObject {
        if (config.maxNodeExecutions !=
            GraphConfig.DEFAULT_MAX_NODE_EXECUTIONS
        ) {
            put("maxNodeExecutions", config.maxNodeExecutions)
        }
        config.executionTimeout?.let { put("executionTimeout", it.text()) }
        if (config.maxConcurrency != Int.MAX_VALUE) put("maxConcurrency", config.maxConcurrency)
        if (config.failFast) put("failFast", true)
        config.defaultNodeTimeout?.let { put("defaultNodeTimeout", it.text()) }
        if (config.defaultRetry !== Retry.NONE) put("defaultRetry", retry(config.defaultRetry))
        if (config.interceptors.isNotEmpty()) {
            put(
                "interceptors",
                JsonArray(
                    config.interceptors.map {
                        JsonPrimitive(name(it, "$at/interceptors", "graph interceptor", "interceptor"))
                    },
                ),
            )
        }
        config.defaultFailureHandler?.let { handler ->
            put(
                "defaultOnFailure",
                buildJsonObject {
                    put("handler", handler)
                    config.defaultFailureKey?.let { put("error", it.name) }
                },
            )
        }
    }

    private fun Duration.text(): String = toString()
}
