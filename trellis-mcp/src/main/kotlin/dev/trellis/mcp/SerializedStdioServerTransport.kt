package dev.trellis.mcp

import io.modelcontextprotocol.json.McpJsonMapper
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider
import io.modelcontextprotocol.spec.McpSchema
import io.modelcontextprotocol.spec.McpServerSession
import io.modelcontextprotocol.spec.McpServerTransport
import io.modelcontextprotocol.spec.McpServerTransportProvider
import reactor.core.publisher.Mono
import java.io.InputStream
import java.io.OutputStream

/**
 * The SDK's stdio server transport, sending one message at a time. Its outbound queue takes one sender at a time and
 * drops a message sent while another is being queued ("Failed to enqueue message", MCP Java SDK issue 686, still so
 * in 2.1: `StdioServerTransportTest` shows it): answers to parallel calls, finishing at the same moment, would be
 * lost and their calls left to time out.
 */
internal class SerializedStdioServerTransport(json: McpJsonMapper, input: InputStream, output: OutputStream) :
    McpServerTransportProvider {
    private val stdio = StdioServerTransportProvider(json, input, output)

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
