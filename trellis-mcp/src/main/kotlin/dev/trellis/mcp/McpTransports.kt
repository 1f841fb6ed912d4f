package dev.trellis.mcp

import io.modelcontextprotocol.client.McpAsyncClient
import io.modelcontextprotocol.client.McpClient
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport
import io.modelcontextprotocol.client.transport.ServerParameters
import io.modelcontextprotocol.client.transport.StdioClientTransport
import io.modelcontextprotocol.client.transport.customizer.McpAsyncHttpClientRequestCustomizer
import io.modelcontextprotocol.json.McpJsonMapper
import io.modelcontextprotocol.spec.McpClientTransport
import io.modelcontextprotocol.spec.McpSchema
import reactor.core.publisher.Mono
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.function.Supplier

/** The timeouts of a session: each request's, and the longer one of the session's `initialize`. */
internal class McpTimeouts(val request: Duration, val initialization: Duration)

/** The SDK's client on [transport]; its own timeout is the longer of the two, a request is held to its own by us. */
private fun client(transport: McpClientTransport, timeouts: McpTimeouts): McpAsyncClient =
    // The SDK sends `initialize` as a request under the request timeout: a server that takes longer to start than one
    // call may take would fail to start. The client's timeout is the longer of the two, and a request is held to the
    // request timeout by McpConnection.
    McpClient.async(transport)
        .requestTimeout(maxOf(timeouts.request, timeouts.initialization))
        .initializationTimeout(timeouts.initialization)
        .clientInfo(McpSchema.Implementation.builder("trellis", "1").build())
        .build()

/** Serializes starts, so the child process a start sees appear is the one it started. */
private val starting = Any()

private fun children(): List<ProcessHandle> = ProcessHandle.current().children().toList()

/** Starts the server process and initializes the session; the session is closed when this fails. */
internal fun openStdio(
    parameters: ServerParameters,
    json: McpJsonMapper,
    stderr: ServerErrors,
    timeouts: McpTimeouts,
): McpSession {
    val transport = SerializedStdioTransport(parameters, json)
    transport.setStdErrorHandler(stderr::add)
    val client = client(transport, timeouts)
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
    return McpSession(client, process).initializedBy(Mono.fromFuture(initialized))
}

/** How to reach a remote server: its address, transport, headers and connect timeout. */
internal class HttpTarget(
    val url: String,
    val sse: Boolean,
    val headers: Map<String, String>,
    val dynamicHeaders: Supplier<Map<String, String>>?,
    val connectTimeout: Duration,
)

/** Opens a session with a remote server over streamable HTTP (or SSE) and initializes it. */
internal fun openHttp(target: HttpTarget, json: McpJsonMapper, timeouts: McpTimeouts): McpSession {
    val uri = URI.create(target.url)
    val base = "${uri.scheme}://${uri.rawAuthority}"
    val endpoint = (uri.rawPath?.ifEmpty { null } ?: "/") + (uri.rawQuery?.let { "?$it" } ?: "")
    val requests = HttpRequest.newBuilder()
    for ((name, value) in target.headers) requests.header(name, value)
    val customizer =
        target.dynamicHeaders?.let { headers ->
            McpAsyncHttpClientRequestCustomizer { builder, _, _, _, _ ->
                Mono.fromSupplier {
                    headers.get().forEach { (name, value) -> builder.setHeader(name, value) }
                    builder
                }
            }
        }
    val clients = HttpClient.newBuilder().connectTimeout(target.connectTimeout)
    val transport: McpClientTransport =
        if (target.sse) {
            sseTransport(base, endpoint, clients, target.connectTimeout, requests, customizer, json)
        } else {
            HttpClientStreamableHttpTransport.builder(base)
                .endpoint(endpoint)
                .clientBuilder(clients)
                .connectTimeout(target.connectTimeout)
                .requestBuilder(requests)
                .jsonMapper(json)
                .apply { if (customizer != null) addAsyncHttpRequestCustomizer(customizer) }
                .build()
        }
    val client = client(transport, timeouts)
    return McpSession(client, null).initializedBy(client.initialize())
}

/** The SDK's HTTP+SSE transport, deprecated by the SDK for streamable HTTP, still what some servers offer alone. */
@Suppress("DEPRECATION")
private fun sseTransport(
    base: String,
    endpoint: String,
    clients: HttpClient.Builder,
    connectTimeout: Duration,
    requests: HttpRequest.Builder,
    customizer: McpAsyncHttpClientRequestCustomizer?,
    json: McpJsonMapper,
): McpClientTransport =
    io.modelcontextprotocol.client.transport.HttpClientSseClientTransport.builder(base)
        .sseEndpoint(endpoint)
        .clientBuilder(clients)
        .connectTimeout(connectTimeout)
        .requestBuilder(requests)
        .jsonMapper(json)
        .apply { if (customizer != null) addAsyncHttpRequestCustomizer(customizer) }
        .build()

/** This session once [initialized] completes; closes it and rethrows when that fails. */
private fun McpSession.initializedBy(initialized: Mono<McpSchema.InitializeResult>): McpSession {
    try {
        await(initialized)
    } catch (e: Exception) {
        close()
        throw e
    }
    return this
}

/**
 * The SDK's stdio transport, sending one message at a time: its outbound queue takes one sender at a time and fails
 * a message sent while another is being queued ("Failed to enqueue message"), which parallel tool calls do (still so
 * in 2.1). The lock is held only while a message is queued, not while it is written or answered.
 */
private class SerializedStdioTransport(parameters: ServerParameters, json: McpJsonMapper) :
    StdioClientTransport(parameters, json) {
    private val sending = Any()

    override fun sendMessage(message: McpSchema.JSONRPCMessage): Mono<Void> =
        synchronized(sending) { super.sendMessage(message) }
}
