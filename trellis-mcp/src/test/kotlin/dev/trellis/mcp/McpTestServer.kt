@file:JvmName("McpTestServer")

package dev.trellis.mcp

import io.modelcontextprotocol.json.McpJsonDefaults
import io.modelcontextprotocol.server.McpServer
import java.io.File
import java.nio.file.Path
import java.time.Duration
import java.util.concurrent.CountDownLatch

/**
 * A small MCP server over stdio ([McpTestFeatures], on the SDK's stdio server transport made safe for parallel
 * answers), that tests start as a child JVM ([serverCommand]). Each call is appended to the file named by
 * `TRELLIS_MCP_LOG` before it runs; `temperature` of the city named by `TRELLIS_MCP_HOLD` never answers; `crash` ends
 * the process. With `TRELLIS_MCP_START_DELAY_MS`, the server waits that long before it reads its first message (a
 * slow start).
 */
fun main() {
    System.getenv("TRELLIS_MCP_START_DELAY_MS")?.let { Thread.sleep(it.toLong()) }
    val log = System.getenv("TRELLIS_MCP_LOG")?.let { File(it) }
    val features =
        McpTestFeatures(
            record = { line -> log?.let { synchronized(it) { it.appendText("$line\n") } } },
            hold = System.getenv("TRELLIS_MCP_HOLD"),
            crash = {
                System.err.println("test server: crashing on purpose")
                System.err.flush()
                Runtime.getRuntime().halt(3)
            },
        )
    features.serve(McpServer.sync(SerializedStdioServerTransport(McpJsonDefaults.getMapper(), System.`in`, System.out)))
    CountDownLatch(1).await() // the transport's threads serve; the client ends this process when it closes
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
            "dev.trellis.mcp.McpTestServer",
        )

/** The test server's tools, each call logged to [log]; [hold] names a city whose temperature never comes. */
fun startTestServer(log: File, hold: String? = null): McpTools {
    val (command, args) = serverCommand()
    val builder = McpTools.stdio(command, *args).env("TRELLIS_MCP_LOG", log.path)
    if (hold != null) builder.env("TRELLIS_MCP_HOLD", hold)
    return builder.initializationTimeout(Duration.ofSeconds(120)).start()
}
