package dev.trellis.mcp

import dev.langchain4j.agent.tool.ToolSpecification
import dev.langchain4j.model.chat.request.json.JsonAnyOfSchema
import dev.langchain4j.model.chat.request.json.JsonArraySchema
import dev.langchain4j.model.chat.request.json.JsonBooleanSchema
import dev.langchain4j.model.chat.request.json.JsonEnumSchema
import dev.langchain4j.model.chat.request.json.JsonIntegerSchema
import dev.langchain4j.model.chat.request.json.JsonNullSchema
import dev.langchain4j.model.chat.request.json.JsonNumberSchema
import dev.langchain4j.model.chat.request.json.JsonObjectSchema
import dev.langchain4j.model.chat.request.json.JsonRawSchema
import dev.langchain4j.model.chat.request.json.JsonReferenceSchema
import dev.langchain4j.model.chat.request.json.JsonSchemaElement
import dev.langchain4j.model.chat.request.json.JsonStringSchema
import io.modelcontextprotocol.json.McpJsonMapper
import io.modelcontextprotocol.spec.McpSchema

/** The LangChain4j specification of an MCP tool: its name, description and input schema, as the model sees them. */
internal fun McpSchema.Tool.toSpecification(json: McpJsonMapper): ToolSpecification {
    val input = inputSchema()
    val parameters = JsonObjectSchema.builder()
    @Suppress("UNCHECKED_CAST")
    (input["properties"] as? Map<String, Any?>)?.forEach { (name, node) ->
        parameters.addProperty(name, schemaElement(node, json))
    }
    @Suppress("UNCHECKED_CAST")
    (input["required"] as? List<String>)?.let { parameters.required(it) }
    (input["additionalProperties"] as? Boolean)?.let { parameters.additionalProperties(it) }
    @Suppress("UNCHECKED_CAST")
    val definitions = (input["\$defs"] ?: input["definitions"]) as? Map<String, Any?>
    if (!definitions.isNullOrEmpty()) {
        parameters.definitions(definitions.mapValues { (_, node) -> schemaElement(node, json) })
    }
    return ToolSpecification.builder()
        .name(name())
        .description(description() ?: title())
        .parameters(parameters.build())
        .build()
}

/**
 * One node of a JSON schema, as LangChain4j's schema elements: the types a model's tool parameters use (strings and
 * enums, numbers, integers, booleans, arrays, objects, `anyOf`, `$ref`, `null`); any other node is passed on as it
 * is (a raw schema), so nothing the server says about its arguments is lost.
 */
@Suppress("UNCHECKED_CAST")
private fun schemaElement(node: Any?, json: McpJsonMapper): JsonSchemaElement {
    val schema = node as? Map<String, Any?> ?: return JsonRawSchema.from(json.writeValueAsString(node))
    val description = schema["description"] as? String
    val enum = schema["enum"] as? List<Any?>
    val ref = schema["\$ref"] as? String
    val anyOf = schema["anyOf"] as? List<Any?>
    return when {
        ref != null -> JsonReferenceSchema.builder().reference(ref.substringAfterLast('/')).build()
        enum != null && enum.all { it is String } ->
            JsonEnumSchema.builder().enumValues(enum.map { it as String }).description(description).build()
        anyOf != null ->
            JsonAnyOfSchema.builder().anyOf(anyOf.map { schemaElement(it, json) }).description(description).build()
        else ->
            when (schema["type"]) {
                "string" -> JsonStringSchema.builder().description(description).build()
                "integer" -> JsonIntegerSchema.builder().description(description).build()
                "number" -> JsonNumberSchema.builder().description(description).build()
                "boolean" -> JsonBooleanSchema.builder().description(description).build()
                "null" -> JsonNullSchema()
                "array" ->
                    JsonArraySchema.builder()
                        .items(schema["items"]?.let { schemaElement(it, json) })
                        .description(description)
                        .build()
                "object" -> objectSchema(schema, description, json)
                else -> JsonRawSchema.from(json.writeValueAsString(schema))
            }
    }
}

@Suppress("UNCHECKED_CAST")
private fun objectSchema(schema: Map<String, Any?>, description: String?, json: McpJsonMapper): JsonObjectSchema {
    val builder = JsonObjectSchema.builder().description(description)
    (schema["properties"] as? Map<String, Any?>)?.forEach { (name, node) ->
        builder.addProperty(name, schemaElement(node, json))
    }
    (schema["required"] as? List<String>)?.let { builder.required(it) }
    (schema["additionalProperties"] as? Boolean)?.let { builder.additionalProperties(it) }
    return builder.build()
}

/**
 * The text the model reads for an MCP tool result: its text contents, one per line; a resource's text (or its
 * address); an image or audio content as a placeholder naming its type. A result with structured content and no
 * text gives that content as JSON.
 */
internal fun McpSchema.CallToolResult.text(json: McpJsonMapper): String {
    val parts = content().orEmpty()
    val structured = structuredContent()
    return if (parts.isEmpty() && structured != null) json.writeValueAsString(structured) else parts.text()
}

/** These contents as text, one per line (see [McpSchema.CallToolResult.text]). */
internal fun List<McpSchema.Content>.text(): String =
    joinToString("\n") { content ->
        when (content) {
            is McpSchema.TextContent -> content.text()
            is McpSchema.ImageContent -> "[image ${content.mimeType()}]"
            is McpSchema.AudioContent -> "[audio ${content.mimeType()}]"
            is McpSchema.ResourceLink -> "[resource ${content.uri()}]"
            is McpSchema.EmbeddedResource -> content.resource().text()
            else -> content.toString()
        }
    }

/** A resource's contents as text: its text, or a placeholder naming the type and size of binary contents. */
internal fun McpSchema.ResourceContents.text(): String =
    when (this) {
        is McpSchema.TextResourceContents -> text()
        is McpSchema.BlobResourceContents ->
            "[resource ${uri()}: ${mimeType() ?: "binary"}, ${blob().length * 3 / 4} bytes]"
        else -> "[resource ${uri()}]"
    }
