package dev.trellis.fleet.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import kotlinx.serialization.SerializationException
import kotlinx.serialization.descriptors.PolymorphicKind
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.SerialKind
import kotlinx.serialization.descriptors.StructureKind
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.doubleOrNull
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.longOrNull

/** A run's input and output as a JSON object of key name to value, each value in its key's serializer. */
internal object StateJson {
    private val json = Json

    fun encode(state: State): String {
        val map = LinkedHashMap<String, JsonElement>()
        for (key in state.schema.keys) {
            if (!state.contains(key)) continue
            @Suppress("UNCHECKED_CAST")
            val typed = key as StateKey<Any?>
            map[key.name] = json.encodeToJsonElement(typed.serializer, state[typed])
        }
        return JsonObject(map).toString()
    }

    /** Parses [text] as a JSON object, or fails naming the problem. */
    fun parseObject(text: String, what: String): JsonObject {
        val element = try {
            json.parseToJsonElement(text)
        } catch (e: SerializationException) {
            throw IllegalArgumentException("$what is not valid JSON (${e.message?.lineSequence()?.first()}).", e)
        }
        return element as? JsonObject ?: throw IllegalArgumentException(
            "$what must be a JSON object of state key name to value, like {\"question\": \"...\"}, but was $element.",
        )
    }

    fun decode(graph: Graph, text: String): State {
        val input = parseObject(text, "The input of graph '${graph.id}'")
        var state = graph.schema.initialState()
        for ((name, element) in input) {
            val key = graph.schema.keyOrNull(name) ?: throw IllegalArgumentException(unknownKey(graph.schema, name))

            @Suppress("UNCHECKED_CAST")
            val typed = key as StateKey<Any?>
            val value = try {
                json.decodeFromJsonElement(typed.serializer, element)
            } catch (e: SerializationException) {
                throw IllegalArgumentException(
                    "The input value of key '$name' of graph '${graph.id}' cannot be read: ${e.message}",
                    e,
                )
            } catch (e: IllegalArgumentException) {
                throw IllegalArgumentException(
                    "The input value of key '$name' of graph '${graph.id}' cannot be read: ${e.message}",
                    e,
                )
            }
            state = state.with(typed, value)
        }
        return state
    }

    fun unknownKey(schema: StateSchema, name: String): String =
        "Unknown state key '$name' for schema '${schema.name}'. Known keys: ${schema.keys.joinToString { it.name }}."

    /** What each key of [schema] accepts, as stored in `trellis_fleet_graphs.keys`: name to "KIND" or "KIND?". */
    fun shapes(schema: StateSchema): String = JsonObject(
        schema.keys.associate { key ->
            val descriptor = key.serializer.descriptor
            key.name to JsonPrimitive(kindName(descriptor.kind) + if (descriptor.isNullable) "?" else "")
        },
    ).toString()

    @OptIn(kotlinx.serialization.ExperimentalSerializationApi::class)
    private fun kindName(kind: SerialKind): String = when (kind) {
        PrimitiveKind.STRING, PrimitiveKind.CHAR, SerialKind.ENUM -> "STRING"
        PrimitiveKind.INT, PrimitiveKind.LONG, PrimitiveKind.SHORT, PrimitiveKind.BYTE -> "INTEGER"
        PrimitiveKind.FLOAT, PrimitiveKind.DOUBLE -> "NUMBER"
        PrimitiveKind.BOOLEAN -> "BOOLEAN"
        StructureKind.LIST -> "ARRAY"
        StructureKind.MAP, StructureKind.CLASS, StructureKind.OBJECT -> "OBJECT"
        is PolymorphicKind, SerialKind.CONTEXTUAL -> "ANY"
    }

    /**
     * Checks [input] against the key shapes a worker registered for the graph, so that a submission that could never
     * start fails at once: an unknown key, or a value of the wrong JSON kind. Returns the problem, or null.
     */
    fun problem(input: JsonObject, shapes: String, graphId: String, version: Int): String? {
        val known = json.parseToJsonElement(shapes).jsonObject
        for ((name, element) in input) {
            val shape = (known[name] as? JsonPrimitive)?.content ?: return "Unknown state key '$name' for graph " +
                "'$graphId' version $version. Known keys: ${known.keys.joinToString()}."
            val nullable = shape.endsWith("?")
            val ok = when {
                element is JsonNull -> nullable
                else -> when (shape.removeSuffix("?")) {
                    "STRING" -> element is JsonPrimitive && element.isString
                    "INTEGER" -> element is JsonPrimitive && !element.isString && element.longOrNull != null
                    "NUMBER" -> element is JsonPrimitive && !element.isString && element.doubleOrNull != null
                    "BOOLEAN" -> element is JsonPrimitive && !element.isString && element.booleanOrNull != null
                    "ARRAY" -> element is JsonArray
                    "OBJECT" -> element is JsonObject
                    else -> true
                }
            }
            if (!ok) {
                return "The input value of key '$name' of graph '$graphId' version $version must be " +
                    "${describe(shape)}, but was $element."
            }
        }
        return null
    }

    private fun describe(shape: String): String {
        val base = when (shape.removeSuffix("?")) {
            "STRING" -> "a JSON string"
            "INTEGER" -> "a JSON integer"
            "NUMBER" -> "a JSON number"
            "BOOLEAN" -> "true or false"
            "ARRAY" -> "a JSON array"
            "OBJECT" -> "a JSON object"
            else -> "a JSON value"
        }
        return if (shape.endsWith("?")) "$base or null" else base
    }
}
