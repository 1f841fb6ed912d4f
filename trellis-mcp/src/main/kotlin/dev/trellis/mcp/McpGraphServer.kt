package dev.trellis.mcp

import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import io.modelcontextprotocol.json.McpJsonDefaults
import io.modelcontextprotocol.json.McpJsonMapper
import io.modelcontextprotocol.server.McpServer
import io.modelcontextprotocol.server.McpServerFeatures
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider
import io.modelcontextprotocol.spec.McpSchema
import jakarta.servlet.http.HttpServlet
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import java.io.FilterInputStream
import java.io.InputStream
import java.io.OutputStream
import java.util.concurrent.CountDownLatch
import java.util.function.Supplier

/**
 * Trellis graphs offered as the tools of an MCP server ([McpGraphTool]s), for any MCP client (an IDE, another agent
 * framework, [McpTools]): over this process's standard input and output ([serveStdio]) or over streamable HTTP
 * ([httpServlet], a servlet for any Servlet 6 container). Each tool call is one run of the tool's graph, from the
 * call's arguments, on a thread of its own (calls run in parallel); the run's outputs are the call's result, as text
 * and as structured content. A failed run, or one interrupted for input, answers with an error result naming it.
 *
 * ```kotlin
 * val server = McpGraphServer.builder("trip-planner", "1.0").tool(plan).build()
 * val servlet = server.httpServlet("/mcp") // mount it in a Servlet container, at /mcp
 * ```
 */
public class McpGraphServer private constructor(
    private val name: String,
    private val version: String,
    /** The tools, in the order they were added. */
    public val tools: List<McpGraphTool>,
    private val runOptions: Supplier<RunOptions>,
) {
    private val json: McpJsonMapper = McpJsonDefaults.getMapper()

    /**
     * Serves the tools over [input] and [output] (by default this process's standard input and output, the stdio
     * transport a client starting this process speaks) until [input] ends, when the client closes it; blocks until
     * then. Nothing else may write to [output]: log to standard error.
     */
    @JvmOverloads
    public fun serveStdio(input: InputStream = System.`in`, output: OutputStream = System.out) {
        val ended = CountDownLatch(1)
        val watched = object : FilterInputStream(input) {
            override fun read(): Int = super.read().also { if (it < 0) ended.countDown() }

            override fun read(b: ByteArray, off: Int, len: Int): Int =
                super.read(b, off, len).also { if (it < 0) ended.countDown() }
        }
        val server =
            McpServer.sync(SerializedStdioServerTransport(json, watched, output))
                .serverInfo(name, version)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(specifications())
                .build()
        try {
            ended.await()
        } finally {
            server.closeGracefully()
        }
    }

    /**
     * A servlet serving the tools over streamable HTTP at [endpoint] (the path clients connect to, such as `/mcp`):
     * mount it at that path in a Servlet 6 container (Jetty 12, Tomcat 11, Spring Boot); it supports asynchronous
     * requests (`asyncSupported`). Authentication is the container's (a filter in front of it).
     */
    @JvmOverloads
    public fun httpServlet(endpoint: String = "/mcp"): HttpServlet {
        val transport =
            HttpServletStreamableServerTransportProvider.builder().jsonMapper(json).mcpEndpoint(endpoint).build()
        McpServer.sync(transport)
            .serverInfo(name, version)
            .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
            .tools(specifications())
            .build()
        return transport
    }

    private fun specifications(): List<McpServerFeatures.SyncToolSpecification> = tools.map { tool ->
        val definition =
            McpSchema.Tool.builder(tool.name, inputSchema(tool))
                .description(tool.description)
                .outputSchema(outputSchema(tool))
                .build()
        McpServerFeatures.SyncToolSpecification.builder()
            .tool(definition)
            .callHandler { _, request -> call(tool, request.arguments().orEmpty()) }
            .build()
    }

    /** One call: a run of the tool's graph from [arguments]; its outputs, or an error result saying what happened. */
    private fun call(tool: McpGraphTool, arguments: Map<String, Any?>): McpSchema.CallToolResult {
        val input =
            try {
                inputState(tool, graphJson.parseToJsonElement(json.writeValueAsString(arguments)).jsonObject)
            } catch (e: IllegalArgumentException) {
                return error(e.message ?: "Invalid arguments.")
            }
        val result =
            try {
                runBlocking { tool.graph.invoke(input, runOptions.get()) }
            } catch (e: GraphRunException) {
                return error("The run ${e.result.runId} of graph '${tool.graph.id}' failed: ${e.result.error?.message}")
            }
        if (result.status != Status.COMPLETED) {
            val waiting = result.interrupts.joinToString { it.toString() }
            return error("The run ${result.runId} of graph '${tool.graph.id}' ended ${result.status} ($waiting).")
        }
        val outputs: JsonObject = outputJson(tool, result.state)
        return McpSchema.CallToolResult.builder()
            .addTextContent(outputText(outputs))
            .structuredContent(json, outputs.toString())
            .isError(false)
            .build()
    }

    private fun error(message: String) =
        McpSchema.CallToolResult.builder().addTextContent(message).isError(true).build()

    /** Declares an [McpGraphServer]: its name, version, tools and the options of its runs. */
    public class Builder internal constructor(private val name: String, private val version: String) {
        private val tools = ArrayList<McpGraphTool>()
        private var runOptions: Supplier<RunOptions> = Supplier { RunOptions.DEFAULT }

        /** Offers [tool]; fails when a tool of the same name was added. */
        public fun tool(tool: McpGraphTool): Builder = apply {
            require(tools.none { it.name == tool.name }) {
                "The server already has a tool named '${tool.name}'; give each McpGraphTool its own name."
            }
            tools += tool
        }

        /**
         * The options of each call's run, asked for each call (a checkpoint store, a budget, interceptors); without
         * a run id, so each run gets its own. By default `RunOptions.DEFAULT`.
         */
        public fun runOptions(options: Supplier<RunOptions>): Builder = apply { runOptions = options }

        /** The server; fails when it has no tool. */
        public fun build(): McpGraphServer {
            require(tools.isNotEmpty()) { "Server '$name' has no tool: add tool(McpGraphTool.builder(name, graph)…)." }
            return McpGraphServer(name, version, tools.toList(), runOptions)
        }
    }

    /** Makes [McpGraphServer]s. */
    public companion object {
        /** A server that tells clients it is [name] at [version]. */
        @JvmStatic
        public fun builder(name: String, version: String): Builder = Builder(name, version)
    }
}
