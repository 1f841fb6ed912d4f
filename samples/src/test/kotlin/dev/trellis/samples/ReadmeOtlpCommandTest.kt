package dev.trellis.samples

import com.sun.net.httpserver.HttpServer
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.net.InetSocketAddress
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.CopyOnWriteArrayList

/**
 * The README's Jaeger command works as written: its `OTEL_*` variables, with the endpoint's host and port replaced by
 * an OTLP/HTTP receiver's on an ephemeral port, configure the samples' SDK, and the research sample's spans arrive
 * there as `POST /v1/traces` with a protobuf body (what Jaeger's port 4318 accepts).
 */
class ReadmeOtlpCommandTest {
    private val readme = Files.readString(Path.of("").toAbsolutePath().resolveSibling("README.md"))

    /** The `NAME=value` assignments of the README's command that runs a traced sample. */
    private fun commandVariables(): Map<String, String> {
        val line = readme.lines().single { it.startsWith("OTEL_") && it.endsWith("./trellis-samples research") }
        return line.split(' ').filter { '=' in it }.associate { it.substringBefore('=') to it.substringAfter('=') }
    }

    @Test
    fun `the README's OTLP command sends the research sample's spans over OTLP HTTP`() = runTest {
        val posts = CopyOnWriteArrayList<String>()
        val bodies = CopyOnWriteArrayList<ByteArray>()
        val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        server.createContext("/") { exchange ->
            exchange.requestBody.use { bodies += it.readAllBytes() }
            posts +=
                "${exchange.requestMethod} ${exchange.requestURI.path} ${exchange.requestHeaders.getFirst(
                    "Content-Type",
                )}"
            exchange.sendResponseHeaders(200, -1)
            exchange.close()
        }
        server.start()
        try {
            val variables = commandVariables()
            variables["OTEL_EXPORTER_OTLP_ENDPOINT"] shouldBe "http://localhost:4318"
            val environment = variables + ("OTEL_EXPORTER_OTLP_ENDPOINT" to "http://127.0.0.1:${server.address.port}") +
                // Metrics and logs are not what this test is about (the command leaves them at their defaults).
                mapOf("OTEL_METRICS_EXPORTER" to "none", "OTEL_LOGS_EXPORTER" to "none")
            val telemetry = SampleTelemetry.fromEnvironment(environment)
            telemetry shouldNotBe null
            telemetry!!.use {
                val context = SampleContext(
                    StandardTestDispatcher(testScheduler),
                    testScheduler.timeSource,
                    telemetry = it.telemetry,
                )
                ResearchSample.run(context) {}
            }
        } finally {
            server.stop(0)
        }
        posts.shouldNotBeEmpty()
        posts.forEach { it shouldStartWith "POST /v1/traces application/x-protobuf" }
        // Protobuf keeps span names as UTF-8 bytes: the run's and its nodes' spans are there.
        val payload = bodies.joinToString("") { String(it, Charsets.ISO_8859_1) }
        val names = listOf("trellis.run research", "trellis.node plan", "trellis.node publish")
        names.filter { it in payload } shouldBe names
    }
}
