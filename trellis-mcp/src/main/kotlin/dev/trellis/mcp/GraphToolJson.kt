package dev.trellis.mcp

import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.SerializationException
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.descriptors.SerialKind
import kotlinx.serialization.descriptors.StructureKind
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/** The JSON of a served graph's arguments and answers, with the keys' own serializers. */
internal val graphJson: Json = Json { ignoreUnknownKeys = true }

/** The input schema of [tool]: an object with a property per input key, required when the key has no default. */
internal fun inputSchema(tool: McpGraphTool): Map<String, Any?> = linkedMapOf(
    "type" to "object",
    "properties" to tool.inputs.entries.associate { (key, description) ->
        key.name to (key.serializer.descriptor.jsonSchema() + ("description" to description))
    },
    "required" to tool.inputs.keys.filter { !it.hasDefault && !it.nullable }.map { it.name },
    "additionalProperties" to false,
)

/** The output schema of [tool]: an object with a property per output key. */
internal fun outputSchema(tool: McpGraphTool): Map<String, Any?> = linkedMapOf(
    "type" to "object",
    "properties" to tool.outputs.associate { it.name to it.serializer.descriptor.jsonSchema() },
)

/**
 * A JSON schema of the values [this] descriptor describes: strings, enums, integers, numbers, booleans, lists, maps
 * and classes (their properties, required unless optional); anything else (polymorphic, contextual) as any value.
 */
@OptIn(ExperimentalSerializationApi::class)
internal fun SerialDescriptor.jsonSchema(): Map<String, Any?> {
    val schema: Map<String, Any?> = when (kind) {
        PrimitiveKind.STRING, PrimitiveKind.CHAR -> mapOf("type" to "string")
        PrimitiveKind.BOOLEAN -> mapOf("type" to "boolean")
        PrimitiveKind.BYTE, PrimitiveKind.SHORT, PrimitiveKind.INT, PrimitiveKind.LONG -> mapOf("type" to "integer")
        PrimitiveKind.FLOAT, PrimitiveKind.DOUBLE -> mapOf("type" to "number")
        SerialKind.ENUM -> mapOf("type" to "string", "enum" to (0 until elementsCount).map { getElementName(it) })
        StructureKind.LIST -> mapOf("type" to "array", "items" to getElementDescriptor(0).jsonSchema())
        StructureKind.MAP -> mapOf("type" to "object", "additionalProperties" to getElementDescriptor(1).jsonSchema())
        StructureKind.CLASS, StructureKind.OBJECT -> mapOf(
            "type" to "object",
            "properties" to
                (0 until elementsCount).associate { getElementName(it) to getElementDescriptor(it).jsonSchema() },
            "required" to (0 until elementsCount).filter { !isElementOptional(it) }.map { getElementName(it) },
        )
        else -> emptyMap() // polymorphic or contextual: any value
    }
    return if (isNullable && schema.isNotEmpty()) mapOf("anyOf" to listOf(schema, mapOf("type" to "null"))) else schema
}

/**
 * The state a call of [tool] starts its graph from: each argument decoded with its key's serializer. Fails with an
 * [IllegalArgumentException] naming an argument that is not an input, or one that does not decode.
 */
internal fun inputState(tool: McpGraphTool, arguments: JsonObject): State {
    val byName = tool.inputs.keys.associateBy { it.name }
    var state = tool.graph.schema.initialState()
    for ((name, value) in arguments) {
        @Suppress("UNCHECKED_CAST")
        val key = byName[name] as StateKey<Any?>? ?: throw IllegalArgumentException(
            "Tool '${tool.name}' has no argument '$name'; its arguments are ${byName.keys}.",
        )
        val decoded =
            try {
                graphJson.decodeFromJsonElement(key.serializer, value)
            } catch (e: SerializationException) {
                throw IllegalArgumentException(
                    "Argument '$name' of tool '${tool.name}' must be a ${key.typeName}, not $value (${e.message}).",
                    e,
                )
            }
        state = state.with(key, decoded)
    }
    return state
}

/** The outputs of [tool] in [state], as a JSON object by key name (an unset key as null). */
internal fun outputJson(tool: McpGraphTool, state: State): JsonObject = JsonObject(
    tool.outputs.associate { key ->
        @Suppress("UNCHECKED_CAST")
        val typed = key as StateKey<Any?>
        key.name to if (state.contains(key)) encode(typed, state[typed]) else JsonNull
    },
)

private fun encode(key: StateKey<Any?>, value: Any?): JsonElement = graphJson.encodeToJsonElement(key.serializer, value)

/** The text a client (or its model) reads: a single string output as it is, anything else as JSON. */
internal fun outputText(outputs: JsonObject): String {
    val single = outputs.values.singleOrNull()
    return if (single is JsonPrimitive && single.isString) single.content else outputs.toString()
}
