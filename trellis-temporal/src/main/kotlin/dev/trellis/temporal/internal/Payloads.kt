package dev.trellis.temporal.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.Node
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject

/** The JSON codec of state values crossing the workflow/activity boundary, with each key's own serializer. */
internal object Payloads {
    val json: Json = Json { encodeDefaults = true }

    @Suppress("UNCHECKED_CAST")
    fun encode(key: StateKey<*>, value: Any?): JsonElement =
        json.encodeToJsonElement(key.serializer as KSerializer<Any?>, value)

    fun decode(key: StateKey<*>, element: JsonElement): Any? = json.decodeFromJsonElement(key.serializer, element)

    /** The set values of [state] among [keys] (every key of the schema when null), by key name. */
    fun encodeState(state: State, keys: Collection<StateKey<*>>?): JsonObject {
        val out = LinkedHashMap<String, JsonElement>()
        for (key in keys ?: state.schema.keys) {
            val value = state.getOrUnset(key)
            if (value !== State.Unset) out[key.name] = encode(key, value)
        }
        return JsonObject(out)
    }

    /** The state of [schema] holding [values] (encoded by [encodeState]); keys not named keep their initial value. */
    fun decodeState(schema: StateSchema, values: JsonObject): State {
        var state = schema.initialState()
        for ((name, element) in values) {
            val key = schema.keyOrNull(name) ?: throw IllegalStateException(
                "State key '$name' is not in schema '${schema.name}': the worker runs another version of the graph " +
                    "than the one that wrote it; deploy the same graph version to every worker.",
            )
            state = state.withUnchecked(key, decode(key, element))
        }
        return state
    }

    @Suppress("UNCHECKED_CAST")
    private fun State.withUnchecked(key: StateKey<*>, value: Any?): State = with(key as StateKey<Any?>, value)

    /**
     * The node at [path] (`node`, `sub/node`, `map[3]/node`) of [graph], walking subgraphs and map nodes' graphs.
     */
    fun resolve(graph: Graph, path: String): Node {
        var current = graph
        val segments = path.split('/')
        for ((i, segment) in segments.withIndex()) {
            val id = segment.substringBefore('[')
            val node = current.nodes.firstOrNull { it.id == id } ?: throw IllegalStateException(
                "Graph '${graph.id}' has no node at '$path' (no '$id' in '${current.id}'): the worker runs another " +
                    "version of the graph; deploy the same graph version to every worker.",
            )
            if (i == segments.lastIndex) return node
            current = node.subgraph ?: throw IllegalStateException(
                "Node '$id' of graph '${current.id}' is not a subgraph or map node, but path '$path' goes through it.",
            )
        }
        error("empty node path")
    }
}
