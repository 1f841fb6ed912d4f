package dev.trellis.mcp

import io.modelcontextprotocol.json.McpJsonDefaults
import io.modelcontextprotocol.server.McpServer
import io.modelcontextprotocol.server.McpSyncServer
import io.modelcontextprotocol.server.transport.HttpServletSseServerTransportProvider
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider
import jakarta.servlet.DispatcherType
import jakarta.servlet.Filter
import jakarta.servlet.http.HttpServlet
import jakarta.servlet.http.HttpServletRequest
import jakarta.servlet.http.HttpServletResponse
import org.eclipse.jetty.ee10.servlet.FilterHolder
import org.eclipse.jetty.ee10.servlet.ServletContextHandler
import org.eclipse.jetty.ee10.servlet.ServletHolder
import org.eclipse.jetty.server.Server
import org.eclipse.jetty.server.ServerConnector
import java.util.Collections
import java.util.EnumSet
import java.util.concurrent.CountDownLatch

/**
 * A servlet in Jetty on loopback, on an ephemeral port (or on [port], to restart a server where a stopped one was);
 * with [token], requests without `Authorization: Bearer <token>` get 401. [stop] ends it. The servlet sees every
 * request's `Authorization` header in [authorizations].
 */
open class JettyServer @JvmOverloads constructor(
    servlet: HttpServlet,
    token: String? = null,
    port: Int = 0,
) : AutoCloseable {
    private val server = Server()
    private val connector = ServerConnector(server).apply {
        host = "127.0.0.1"
        this.port = port
    }
    val authorizations: MutableList<String?> = Collections.synchronizedList(ArrayList())

    init {
        server.addConnector(connector)
        val context = ServletContextHandler()
        context.contextPath = "/"
        context.addServlet(ServletHolder(servlet).apply { isAsyncSupported = true }, "/*")
        val filter = Filter { request, response, chain ->
            val authorization = (request as HttpServletRequest).getHeader("Authorization")
            authorizations += authorization
            if (token != null && authorization != "Bearer $token") {
                (response as HttpServletResponse).sendError(401, "missing or wrong token")
            } else {
                chain.doFilter(request, response)
            }
        }
        val holder = FilterHolder(filter).apply { isAsyncSupported = true }
        context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST))
        server.handler = context
        server.start()
    }

    /** The port it listens on. */
    val port: Int get() = connector.localPort

    fun stop() = server.stop()

    override fun close() = stop()
}

/**
 * [McpTestFeatures] served over streamable HTTP at `/mcp` (or, with [sse], over HTTP with server-sent events at
 * `/sse`) by the SDK's servlet transport in Jetty. Calls are recorded in [calls].
 */
class HttpTestServer @JvmOverloads constructor(
    hold: String? = null,
    token: String? = null,
    port: Int = 0,
    sse: Boolean = false,
    val release: CountDownLatch = CountDownLatch(1),
    val calls: MutableList<String> = Collections.synchronizedList(ArrayList()),
) : AutoCloseable {
    private val features = McpTestFeatures(record = { calls += it }, hold = hold, release = release)
    private val mcp: McpSyncServer
    private val jetty: JettyServer

    init {
        val json = McpJsonDefaults.getMapper()
        val servlet: HttpServlet
        if (sse) {
            @Suppress("DEPRECATION")
            val transport =
                HttpServletSseServerTransportProvider.builder().jsonMapper(json).sseEndpoint("/sse")
                    .messageEndpoint("/message").build()
            mcp = features.serve(McpServer.sync(transport))
            servlet = transport
        } else {
            val transport =
                HttpServletStreamableServerTransportProvider.builder().jsonMapper(json).mcpEndpoint("/mcp").build()
            mcp = features.serve(McpServer.sync(transport))
            servlet = transport
        }
        jetty = JettyServer(servlet, token, port)
    }

    val port: Int get() = jetty.port

    /** Its MCP endpoint: `/mcp`, or `/sse` for an SSE server. */
    val url: String = "http://127.0.0.1:${jetty.port}/" + if (sse) "sse" else "mcp"

    val authorizations: List<String?> get() = jetty.authorizations

    override fun close() {
        release.countDown()
        jetty.stop()
        mcp.close()
    }
}
