package dev.trellis.langchain4j

import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.modelcontextprotocol.json.McpJsonDefaults
import io.modelcontextprotocol.server.McpServer
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider
import io.modelcontextprotocol.spec.McpSchema
import io.modelcontextprotocol.spec.McpServerSession
import io.modelcontextprotocol.spec.McpServerTransport
import io.modelcontextprotocol.spec.McpServerTransportProvider
import org.junit.jupiter.api.Test
import reactor.core.publisher.Mono
import java.io.InputStream
import java.io.OutputStream
import java.io.PipedInputStream
import java.io.PipedOutputStream
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * Whether the MCP Java SDK's stdio server transport still drops answers sent at the same moment (SDK issue 686): a
 * server on it, driven in process over pipes, answers rounds of parallel calls while every send it makes is counted.
 * The SDK's own transport fails some sends ("Failed to enqueue message": those calls never get an answer), so
 * [SerializedStdioServerTransport] stays; on it, every call is answered. Should the first test fail after an SDK
 * upgrade, the SDK fixed the race: remove the serialized transport and this test's first half.
 */
class StdioServerTransportTest {
    private val json = McpJsonDefaults.getMapper()

    /** Sends of the server's session: how many failed; the answers that reached the client, by request id. */
    private class Counted(private val inner: McpServerTransportProvider) : McpServerTransportProvider by inner {
        val failed = AtomicInteger()

        override fun setSessionFactory(sessionFactory: McpServerSession.Factory) =
            inner.setSessionFactory { transport -> sessionFactory.create(CountingSends(transport, failed)) }
    }

    private class CountingSends(private val transport: McpServerTransport, private val failed: AtomicInteger) :
        McpServerTransport by transport {
        override fun sendMessage(message: McpSchema.JSONRPCMessage): Mono<Void> =
            transport.sendMessage(message).doOnError { failed.incrementAndGet() }
    }

    /** A server on [transport] over pipes; runs [rounds] rounds of [calls] parallel calls, or until one is lost. */
    private fun lostAnswers(rounds: Int, calls: Int, transport: (InputStream, OutputStream) -> McpServerTransportProvider): Pair<Int, Int> {
        val toServer = PipedOutputStream()
        val serverIn = PipedInputStream(toServer, 1 shl 20)
        val fromServer = PipedInputStream(1 shl 20)
        val serverOut = PipedOutputStream(fromServer)
        val counted = Counted(transport(serverIn, serverOut))
        val server = McpTestFeatures(record = {}).serve(McpServer.sync(counted))
        val answered = ConcurrentHashMap.newKeySet<Long>()
        val reader = Thread {
            fromServer.bufferedReader().forEachLine { line ->
                Regex("\"id\":(\\d+)").find(line)?.let { answered += it.groupValues[1].toLong() }
            }
        }.apply { isDaemon = true; start() }
        try {
            fun send(line: String) = synchronized(toServer) { toServer.write("$line\n".toByteArray()); toServer.flush() }
            send(
                """{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",""" +
                    """"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}""",
            )
            waitFor { 0L in answered }
            send("""{"jsonrpc":"2.0","method":"notifications/initialized"}""")
            var sent = 0L
            var round = 0
            while (round < rounds && counted.failed.get() == 0) {
                val ids = (1..calls).map { ++sent }
                val lines = ids.joinToString("\n") {
                    """{"jsonrpc":"2.0","id":$it,"method":"tools/call","params":{"name":"add","arguments":{"a":$it,"b":1}}}"""
                }
                send(lines)
                // Every call is either answered or its answer's send failed: nothing is left to chance or a clock.
                waitFor { answered.count { it in ids.first()..ids.last() } + counted.failed.get() >= calls }
                round++
            }
            return counted.failed.get() to (sent.toInt() - answered.count { it > 0 })
        } finally {
            server.closeGracefully()
            toServer.close()
            reader.interrupt()
        }
    }

    private fun waitFor(condition: () -> Boolean) {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120)
        while (!condition()) {
            check(System.nanoTime() < deadline) { "the server did not answer within 120 s" }
            Thread.sleep(2)
        }
    }

    @Test
    fun `the SDK's stdio server transport still loses answers sent at the same moment`() {
        val (failed, unanswered) = lostAnswers(rounds = 200, calls = 100) { input, output ->
            StdioServerTransportProvider(json, input, output)
        }
        failed shouldBeGreaterThan 0 // the SDK failed to queue some answers...
        unanswered shouldBe failed // ...and those calls were never answered
    }

    @Test
    fun `the serialized stdio server transport answers every parallel call`() {
        val (failed, unanswered) = lostAnswers(rounds = 20, calls = 100) { input, output ->
            SerializedStdioServerTransport(json, input, output)
        }
        failed shouldBe 0
        unanswered shouldBe 0
    }
}
