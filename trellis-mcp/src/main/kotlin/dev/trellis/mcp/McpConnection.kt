package dev.trellis.mcp

import io.modelcontextprotocol.client.McpAsyncClient
import io.modelcontextprotocol.spec.McpError
import io.modelcontextprotocol.spec.McpSchema
import io.modelcontextprotocol.spec.McpTransportException
import io.modelcontextprotocol.spec.McpTransportSessionClosedException
import io.modelcontextprotocol.spec.McpTransportSessionNotFoundException
import reactor.core.publisher.Mono
import java.io.IOException
import java.net.ConnectException
import java.net.http.HttpConnectTimeoutException
import java.time.Duration
import java.util.ArrayDeque
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutionException

/**
 * One session with an MCP server: the SDK's client and, for a server started as a child process, that process (so a
 * call to a server that ended fails at once instead of after the request timeout).
 */
internal class McpSession(val client: McpAsyncClient, private val process: ProcessHandle?) {
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

    /** Ends the session, and the server process if there is one (the SDK's stdio transport destroys it). */
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

    private companion object {
        val CLOSE_TIMEOUT: Duration = Duration.ofSeconds(5)
    }
}

/**
 * The connection of an [McpTools] to its server: the current [McpSession] and, for a remote server, how to open a
 * new one ([reopen]). A request that fails because the connection dropped discards the session, so the next request
 * opens a new one (a new `initialize`); a request that certainly did not reach the server (the connection was
 * refused, or the server no longer knows the session, as after its restart) is sent once more at once, on the new
 * session. A request that may have reached the server is not repeated here: its failure fails the tool call's
 * attempt, which the tool node's retry policy may run again. A child process that ended is not restarted.
 */
internal class McpConnection(
    first: McpSession,
    private val reopen: (() -> McpSession)?,
    val stderr: ServerErrors,
    /** How long a request may wait for its answer (the client's own timeout is the longer initialization one). */
    val requestTimeout: Duration,
) {
    private val lock = Any()

    @Volatile
    private var session: McpSession? = first

    @Volatile
    private var closed = false

    /** Calls tool [request], failing with a `TimeoutException` when the server has not answered in [requestTimeout]. */
    fun callTool(request: McpSchema.CallToolRequest): McpSchema.CallToolResult = request { it.callTool(request) }

    /** The answer to the request [call] sends, under [requestTimeout], reconnecting as the class says. */
    fun <T : Any> request(call: (McpAsyncClient) -> Mono<T>): T {
        val current = current()
        try {
            return current.await(call(current.client).timeout(requestTimeout))
        } catch (e: Exception) {
            if (reopen == null || !e.isTransportFailure()) throw e
            discard(current)
            if (!e.wasNotDelivered()) throw e
        }
        val fresh = current()
        return fresh.await(call(fresh.client).timeout(requestTimeout))
    }

    /** Every page of a listing, [first] then [next] with each cursor. */
    fun <P : Any, T> pages(
        first: (McpAsyncClient) -> Mono<P>,
        next: (McpAsyncClient, String) -> Mono<P>,
        items: (P) -> List<T>,
        cursor: (P) -> String?,
    ): List<T> {
        val all = ArrayList<T>()
        var page = request(first)
        all += items(page)
        while (true) {
            val at = cursor(page) ?: break
            page = request { next(it, at) }
            all += items(page)
        }
        return all
    }

    /** Every tool the server lists, all pages. */
    fun listTools(): MutableList<McpSchema.Tool> =
        pages({ it.listTools() }, { c, at -> c.listTools(at) }, { it.tools() }, { it.nextCursor() }).toMutableList()

    /** Ends the current session (and the server process, for a child process). */
    fun close() {
        val current = synchronized(lock) {
            closed = true
            session.also { session = null }
        }
        current?.close()
    }

    private fun current(): McpSession = synchronized(lock) {
        check(!closed) { "These McpTools are closed: start new ones (McpTools.http(url)…start())." }
        session ?: (reopen ?: throw McpTransportSessionClosedException()).invoke().also { session = it }
    }

    private fun discard(stale: McpSession) {
        val dropped = synchronized(lock) { if (session === stale) stale.also { session = null } else null }
        dropped?.close()
    }
}

private fun Throwable.causes(): Sequence<Throwable> = generateSequence(this) { it.cause?.takeIf { c -> c !== it } }

/** A failure of the connection rather than an answer of the server (a JSON-RPC error) or a timeout. */
private fun Throwable.isTransportFailure(): Boolean =
    causes().none { it is McpError } && causes().any {
        it is IOException || it is McpTransportException || it is McpTransportSessionNotFoundException ||
            it is McpTransportSessionClosedException || it.isSessionTerminated()
    }

/**
 * The SDK's failure of the requests pending when it ends a session the server no longer knows (a 404 after the
 * server restarted): a plain RuntimeException, recognized by its message.
 */
private fun Throwable.isSessionTerminated(): Boolean = message == "MCP session with server terminated"

/** A failure that shows the request never reached the server: it is safe to send again. */
private fun Throwable.wasNotDelivered(): Boolean =
    causes().any {
        it is ConnectException || it is HttpConnectTimeoutException || it is McpTransportSessionNotFoundException ||
            it.isSessionTerminated()
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
