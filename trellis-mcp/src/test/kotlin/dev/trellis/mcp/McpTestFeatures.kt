package dev.trellis.mcp

import dev.trellis.langchain4j.Tools
import io.modelcontextprotocol.json.McpJsonDefaults
import io.modelcontextprotocol.server.McpServer
import io.modelcontextprotocol.server.McpServerFeatures
import io.modelcontextprotocol.spec.McpSchema
import java.util.Base64
import java.util.concurrent.CountDownLatch

/**
 * What the test servers offer, over stdio ([McpTestServer]) or HTTP ([HttpTestServer]), built with the SDK's server
 * API. Tools: `temperature(city, unit)`, `add(a, b)`, `lookup(city)` (an error result for any city but Paris) and
 * `crash()` (ends a stdio server's process). Each call is given to [record] (`name city` or `name`) before it runs;
 * `temperature` of the city [hold] names never answers (until [release] counts down). Resources: a text guide and a
 * binary logo; prompt `summarize(topic)`.
 */
class McpTestFeatures(
    private val record: (String) -> Unit,
    private val hold: String? = null,
    private val release: CountDownLatch = CountDownLatch(1),
    private val crash: () -> Unit = {},
) {
    private val json = McpJsonDefaults.getMapper()

    private fun text(value: String, error: Boolean = false) =
        McpSchema.CallToolResult.builder().addTextContent(value).isError(error).build()

    private fun tool(name: String, description: String, schema: String) =
        McpSchema.Tool.builder(name, json, schema).description(description).build()

    fun tools(): List<McpServerFeatures.SyncToolSpecification> = listOf(
        spec(
            tool(
                "temperature",
                "Current temperature in a city",
                """{"type": "object", "properties": {"city": {"type": "string", "description": "the city"},
                   "unit": {"type": "string", "enum": ["CELSIUS", "FAHRENHEIT"]}}, "required": ["city", "unit"]}""",
            ),
        ) { arguments ->
            val city = arguments["city"] as String
            record("temperature $city")
            if (city == hold) release.await()
            text("$city: 21 ${if (arguments["unit"] == "CELSIUS") "C" else "F"}")
        },
        spec(
            tool(
                "add",
                "Adds two integers",
                """{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                   "required": ["a", "b"]}""",
            ),
        ) { arguments ->
            record("add")
            text(((arguments["a"] as Number).toLong() + (arguments["b"] as Number).toLong()).toString())
        },
        spec(
            tool(
                "lookup",
                "Looks a city up",
                """{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}""",
            ),
        ) { arguments ->
            val city = arguments["city"] as String
            record("lookup $city")
            if (city == "Paris") text("Paris: France") else text("no city named $city", error = true)
        },
        spec(tool("crash", "Ends the server process", """{"type": "object", "properties": {}}""")) {
            record("crash")
            crash()
            text("still here")
        },
    )

    private fun spec(tool: McpSchema.Tool, handler: (Map<String, Any?>) -> McpSchema.CallToolResult) =
        McpServerFeatures.SyncToolSpecification.builder().tool(tool)
            .callHandler { _, request -> handler(request.arguments().orEmpty()) }.build()

    fun resources(): List<McpServerFeatures.SyncResourceSpecification> = listOf(
        McpServerFeatures.SyncResourceSpecification(
            McpSchema.Resource.builder("file:///guides/mcp.md", "mcp-guide").description("How to use MCP")
                .mimeType("text/markdown").build(),
        ) { _, request ->
            record("read ${request.uri()}")
            McpSchema.ReadResourceResult.builder(
                listOf(
                    McpSchema.TextResourceContents.builder(request.uri(), "# MCP\nTools, resources and prompts.")
                        .mimeType("text/markdown").build(),
                ),
            ).build()
        },
        McpServerFeatures.SyncResourceSpecification(
            McpSchema.Resource.builder("file:///logo.png", "logo").mimeType("image/png").build(),
        ) { _, request ->
            val blob = Base64.getEncoder().encodeToString(ByteArray(12) { it.toByte() })
            McpSchema.ReadResourceResult.builder(
                listOf(McpSchema.BlobResourceContents.builder(request.uri(), blob).mimeType("image/png").build()),
            ).build()
        },
    )

    fun prompts(): List<McpServerFeatures.SyncPromptSpecification> = listOf(
        McpServerFeatures.SyncPromptSpecification(
            McpSchema.Prompt.builder("summarize").description("Asks for a summary of a topic").arguments(
                listOf(
                    McpSchema.PromptArgument.builder("topic").description("what to summarize").required(true).build(),
                ),
            ).build(),
        ) { _, request ->
            val topic = request.arguments()?.get("topic") ?: error("topic is required")
            record("prompt summarize $topic")
            McpSchema.GetPromptResult.builder(
                listOf(
                    McpSchema.PromptMessage.builder(
                        McpSchema.Role.USER,
                        McpSchema.TextContent.builder("Summarize what you know about $topic.").build(),
                    ).build(),
                    McpSchema.PromptMessage.builder(
                        McpSchema.Role.ASSISTANT,
                        McpSchema.TextContent.builder("Here is what I know about $topic:").build(),
                    ).build(),
                ),
            ).description("summary of $topic").build()
        },
    )

    /** The server's capabilities: tools, resources and prompts. */
    fun capabilities(): McpSchema.ServerCapabilities =
        McpSchema.ServerCapabilities.builder().tools(false).resources(false, false).prompts(false).build()

    /** Adds every feature to a server specification and builds it. */
    fun <S : McpServer.SyncSpecification<S>> serve(spec: McpServer.SyncSpecification<S>) =
        spec.serverInfo("trellis-test-server", "1").capabilities(capabilities())
            .tools(tools()).resources(resources()).prompts(prompts()).build()
}
