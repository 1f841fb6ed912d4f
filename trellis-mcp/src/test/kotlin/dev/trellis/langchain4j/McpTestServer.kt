@file:JvmName("McpTestServer")

package dev.trellis.langchain4j

import io.modelcontextprotocol.json.McpJsonMapper
import io.modelcontextprotocol.server.McpServer
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider
import io.modelcontextprotocol.spec.McpSchema
import io.modelcontextprotocol.spec.McpServerSession
import io.modelcontextprotocol.spec.McpServerTransport
import io.modelcontextprotocol.spec.McpServerTransportProvider
import reactor.core.publisher.Mono
import java.io.File
import java.nio.file.Path
import java.time.Duration
import java.util.concurrent.CountDownLatch

/**
 * A small MCP server over stdio, built with the SDK's server API, that tests start as a child JVM ([serverCommand]).
 * Tools: `temperature(city, unit)`, `add(a, b)`, `lookup(city)` (an error result for any city but Paris) and
 * `crash()` (the process dies). Each call is appended to the file named by `TRELLIS_MCP_LOG` (`name city` or `name`)
 * before it runs; `temperature` of the city named by `TRELLIS_MCP_HOLD` never answers. With
 * `TRELLIS_MCP_START_DELAY_MS`, the server waits that long before it reads its first message (a slow start).
 */
fun main() {
    System.getenv("TRELLIS_MCP_START_DELAY_MS")?.let { Thread.sleep(it.toLong()) }
    val json = McpJsonMapper.getDefault()
    val log = System.getenv("TRELLIS_MCP_LOG")?.let { File(it) }
    val hold = System.getenv("TRELLIS_MCP_HOLD")

    fun record(line: String) = log?.let { synchronized(it) { it.appendText("$line\n") } }

    fun text(value: String, error: Boolean = false) =
        McpSchema.CallToolResult.builder().addTextContent(value).isError(error).build()

    val temperature =
        McpSchema.Tool.builder().name("temperature").description("Current temperature in a city").inputSchema(
            json,
            """{"type": "object", "properties": {"city": {"type": "string", "description": "the city"},
               "unit": {"type": "string", "enum": ["CELSIUS", "FAHRENHEIT"]}}, "required": ["city", "unit"]}""",
        ).build()
    val add =
        McpSchema.Tool.builder().name("add").description("Adds two integers").inputSchema(
            json,
            """{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
               "required": ["a", "b"]}""",
        ).build()
    val lookup =
        McpSchema.Tool.builder().name("lookup").description("Looks a city up").inputSchema(
            json,
            """{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}""",
        ).build()
    val crash =
        McpSchema.Tool.builder().name("crash").description("Ends the server process")
            .inputSchema(json, """{"type": "object", "properties": {}}""").build()

    McpServer.sync(SerializedStdioServer(json))
        .serverInfo("trellis-test-server", "1")
        .capabilities(McpSchema.ServerCapabilities.builder().tools(true).build())
        .toolCall(temperature) { _, request ->
            val city = request.arguments()["city"] as String
            record("temperature $city")
            if (city == hold) CountDownLatch(1).await()
            text("$city: 21 ${if (request.arguments()["unit"] == "CELSIUS") "C" else "F"}")
        }.toolCall(add) { _, request ->
            record("add")
            val arguments = request.arguments()
            text(((arguments["a"] as Number).toLong() + (arguments["b"] as Number).toLong()).toString())
        }.toolCall(lookup) { _, request ->
            val city = request.arguments()["city"] as String
            record("lookup $city")
            if (city == "Paris") text("Paris: France") else text("no city named $city", error = true)
        }.toolCall(crash) { _, _ ->
            record("crash")
            System.err.println("test server: crashing on purpose")
            System.err.flush()
            Runtime.getRuntime().halt(3)
            error("unreachable")
        }.build()
    CountDownLatch(1).await() // the transport's threads serve; the client ends this process when it closes
}

/**
 * The SDK's stdio server transport, sending one answer at a time. Its outbound queue takes one sender at a time and
 * drops a message sent while another is being queued ("Failed to enqueue message", MCP Java SDK issue 686): answers
 * to parallel calls, finishing at the same moment, would be lost and their calls left to time out.
 */
private class SerializedStdioServer(json: McpJsonMapper) : McpServerTransportProvider {
    private val stdio = StdioServerTransportProvider(json)

    override fun setSessionFactory(sessionFactory: McpServerSession.Factory) =
        stdio.setSessionFactory { transport -> sessionFactory.create(SerializedSends(transport)) }

    override fun notifyClients(method: String, params: Any?): Mono<Void> = stdio.notifyClients(method, params)

    override fun closeGracefully(): Mono<Void> = stdio.closeGracefully()

    override fun protocolVersions(): List<String> = stdio.protocolVersions()
}

private class SerializedSends(private val transport: McpServerTransport) : McpServerTransport by transport {
    private val sending = Any()

    // Subscribing queues the message (the session is ready by the time it answers): under the lock, one at a time.
    override fun sendMessage(message: McpSchema.JSONRPCMessage): Mono<Void> =
        Mono.defer { Mono.fromFuture(synchronized(sending) { transport.sendMessage(message).toFuture() }) }
}

/** The command line that starts [main] in a child JVM on this test's class path. */
fun serverCommand(): Pair<String, Array<String>> =
    Path.of(System.getProperty("java.home"), "bin", "java").toString() to
        arrayOf(
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            System.getProperty("java.class.path"),
            "dev.trellis.langchain4j.McpTestServer",
        )

/** The test server's tools, each call logged to [log]; [hold] names a city whose temperature never comes. */
fun startTestServer(log: File, hold: String? = null): McpTools {
    val (command, args) = serverCommand()
    val builder = McpTools.stdio(command, *args).env("TRELLIS_MCP_LOG", log.path)
    if (hold != null) builder.env("TRELLIS_MCP_HOLD", hold)
    return builder.initializationTimeout(Duration.ofSeconds(120)).start()
}
