package dev.trellis.langchain4j

import io.modelcontextprotocol.client.McpAsyncClient
import io.modelcontextprotocol.client.McpClient
import io.modelcontextprotocol.client.transport.ServerParameters
import io.modelcontextprotocol.client.transport.StdioClientTransport
import io.modelcontextprotocol.json.McpJsonMapper
import io.modelcontextprotocol.spec.McpSchema
import reactor.core.publisher.Mono
import java.time.Duration
import java.util.ArrayDeque
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutionException

/**
 * A session with an MCP server process over stdio: the SDK's client, the server's process (so a call to a server
 * that ended fails at once instead of after the request timeout) and the last lines it wrote to its standard error.
 */
internal class McpConnection private constructor(
    val client: McpAsyncClient,
    private val process: ProcessHandle?,
    val stderr: ServerErrors,
    /** How long a tool call may wait for its answer (the client's own timeout is the longer initialization one). */
    val requestTimeout: Duration,
) {
    /** Calls tool [request], failing with a `TimeoutException` when the server has not answered in [requestTimeout]. */
    fun callTool(request: McpSchema.CallToolRequest): McpSchema.CallToolResult =
        await(client.callTool(request).timeout(requestTimeout))

    /** The value of [mono]; fails with [McpServerExited] as soon as the server process ends without answering. */
    fun <T : Any> await(mono: Mono<T>): T {
        val answer = mono.toFuture()
        val exit = process?.onExit()
        try {
            (if (exit == null) answer else CompletableFuture.anyOf(answer, exit)).get()
        } catch (e: InterruptedException) {
            answer.cancel(true)
            throw e
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        }
        if (!answer.isDone) throw McpServerExited(process!!.pid())
        return try {
            answer.get()
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        }
    }

    /** Every tool the server lists, all pages. */
    fun listTools(): MutableList<McpSchema.Tool> {
        val tools = ArrayList<McpSchema.Tool>()
        var page = await(client.listTools())
        tools += page.tools()
        while (page.nextCursor() != null) {
            page = await(client.listTools(page.nextCursor()))
            tools += page.tools()
        }
        return tools
    }

    /** Ends the session and the server process (the SDK's transport destroys it). */
    fun close() {
        try {
            client.closeGracefully().block(CLOSE_TIMEOUT)
        } catch (_: RuntimeException) {
            // a server that ended or does not answer: closed below
        } finally {
            client.close()
            process?.takeIf { it.isAlive }?.destroyForcibly()
        }
    }

    companion object {
        private val CLOSE_TIMEOUT: Duration = Duration.ofSeconds(5)

        /** Serializes starts, so the child process a start sees appear is the one it started. */
        private val starting = Any()

        /** Starts the server and initializes the session; the caller closes the connection when this fails. */
        fun open(
            parameters: ServerParameters,
            json: McpJsonMapper,
            stderr: ServerErrors,
            requestTimeout: Duration,
            initializationTimeout: Duration,
        ): McpConnection {
            val transport = SerializedStdioTransport(parameters, json)
            transport.setStdErrorHandler(stderr::add)
            // The SDK sends `initialize` as a request under the request timeout: a server that takes longer to start
            // than one call may take would fail to start. The client's timeout is the longer of the two, and a tool
            // call is held to the request timeout by [callTool].
            val client =
                McpClient.async(transport)
                    .requestTimeout(maxOf(requestTimeout, initializationTimeout))
                    .initializationTimeout(initializationTimeout)
                    .clientInfo(McpSchema.Implementation("trellis", "1"))
                    .build()
            val initialized: CompletableFuture<McpSchema.InitializeResult>
            val process: ProcessHandle?
            synchronized(starting) {
                val before = children().mapTo(HashSet()) { it.pid() }
                initialized = client.initialize().toFuture() // the transport starts the process on connecting
                var started: ProcessHandle? = null
                while (started == null && !initialized.isDone) {
                    started = children().firstOrNull { it.pid() !in before }
                    if (started == null) Thread.sleep(1)
                }
                process = started ?: children().firstOrNull { it.pid() !in before }
            }
            val connection = McpConnection(client, process, stderr, requestTimeout)
            try {
                connection.await(Mono.fromFuture(initialized))
            } catch (e: Exception) {
                connection.close()
                throw e
            }
            return connection
        }

        private fun children(): List<ProcessHandle> = ProcessHandle.current().children().toList()
    }
}

/**
 * The SDK's stdio transport, sending one message at a time: its outbound queue takes one sender at a time and fails
 * a message sent while another is being queued ("Failed to enqueue message"), which parallel tool calls do. The
 * lock is held only while a message is queued, not while it is written or answered.
 */
private class SerializedStdioTransport(parameters: ServerParameters, json: McpJsonMapper) :
    StdioClientTransport(parameters, json) {
    private val sending = Any()

    override fun sendMessage(message: McpSchema.JSONRPCMessage): Mono<Void> =
        synchronized(sending) { super.sendMessage(message) }
}

/** The server process ended before it answered. */
internal class McpServerExited(val pid: Long) : RuntimeException("MCP server process $pid ended")

/** The last lines a server wrote to its standard error, for error messages. */
internal class ServerErrors {
    private val lines = ArrayDeque<String>()

    @Synchronized
    fun add(line: String) {
        if (lines.size == MAX_LINES) lines.removeFirst()
        lines.addLast(line)
    }

    @Synchronized
    fun describe(): String = if (lines.isEmpty()) "" else "; its last lines on stderr: ${lines.joinToString(" | ")}"

    private companion object {
        const val MAX_LINES = 5
    }
}
