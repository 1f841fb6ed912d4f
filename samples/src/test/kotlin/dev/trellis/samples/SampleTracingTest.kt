package dev.trellis.samples

import dev.trellis.opentelemetry.TrellisTelemetry
import dev.trellis.runtime.Status
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.util.logging.Handler
import java.util.logging.LogRecord
import java.util.logging.Logger

/** The samples traced with OpenTelemetry: one trace per run, the expected node spans (`docs/observability.md`). */
class SampleTracingTest {
    private val exporter = InMemorySpanExporter.create()
    private val sdk = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
        .build()

    private fun TestScope.context(telemetry: TrellisTelemetry) =
        SampleContext(StandardTestDispatcher(testScheduler), testScheduler.timeSource, telemetry = telemetry)

    private val nodeId = AttributeKey.stringKey("trellis.node.id")

    @Test
    fun `the research sample is one trace, the run span with a span per node execution under it`() = runTest {
        val outcome = ResearchSample.run(context(TrellisTelemetry(sdk))) {}
        outcome.result.status shouldBe Status.COMPLETED
        val spans = exporter.finishedSpanItems
        spans.map { it.traceId }.toSet().size shouldBe 1
        val run = spans.single { it.name == "trellis.run research" }
        val nodes = spans.filter { it.name.startsWith("trellis.node ") }
        nodes.forEach { it.parentSpanId shouldBe run.spanId }
        val drafts = List(ResearchSample.ACCEPT_AT) { "write" } + List(ResearchSample.ACCEPT_AT) { "review" }
        nodes.map { it.attributes[nodeId] } shouldContainExactlyInAnyOrder
            listOf("plan", "search-web", "search-papers", "search-news", "search-code", "collect", "publish") + drafts
        val news = nodes.single { it.attributes[nodeId] == "search-news" }
        news.events.map { it.name } shouldBe listOf("exception", "trellis.retry")
        // Nothing but Trellis spans: the sample's tools make none.
        spans.size shouldBe nodes.size + 1
    }

    @Test
    fun `a sample of several runs makes one trace per run`() = runTest {
        val outcome = RoutingSample.run(context(TrellisTelemetry(sdk))) {}
        outcome.results.size shouldBe RoutingSample.tickets.size
        val spans = exporter.finishedSpanItems
        val traces = spans.groupBy { it.traceId }
        traces.size shouldBe outcome.results.size
        for (trace in traces.values) trace.count { it.name == "trellis.run routing" } shouldBe 1
        val runIds = AttributeKey.stringKey("trellis.run.id")
        val traced = spans.filter { it.name == "trellis.run routing" }.map { it.attributes[runIds] }
        traced.toSet() shouldBe outcome.results.map { it.runId }.toSet()
    }

    @Test
    fun `without OTEL variables the samples are not traced`() {
        SampleTelemetry.fromEnvironment(mapOf("HOME" to "/root", "OTEL_SERVICE_NAME" to "x")) shouldBe null
    }

    @Test
    fun `OTEL variables configure the SDK, OTEL_TRACES_EXPORTER=logging prints one trace per run`() {
        val records = ArrayList<LogRecord>()
        val handler = object : Handler() {
            override fun publish(record: LogRecord) {
                synchronized(records) { records += record }
            }

            override fun flush() = Unit

            override fun close() = Unit
        }
        val logger = Logger.getLogger("io.opentelemetry.exporter.logging.LoggingSpanExporter")
        logger.addHandler(handler)
        try {
            val environment = mapOf(
                "OTEL_SERVICE_NAME" to "trellis-samples-test",
                "OTEL_TRACES_EXPORTER" to "logging",
                "OTEL_METRICS_EXPORTER" to "none",
                "OTEL_LOGS_EXPORTER" to "none",
            )
            val otel = SampleTelemetry.fromEnvironment(environment)
            otel shouldNotBe null
            otel!!.use {
                runTest { RoutingSample.run(context(it.telemetry)) {} }
            }
        } finally {
            logger.removeHandler(handler)
        }
        val lines = synchronized(records) { records.map { it.message } }
        val runs = lines.filter { it.startsWith("'trellis.run routing'") }
        runs.size shouldBe RoutingSample.tickets.size
        // "'name' : traceId spanId ...": one trace per run.
        runs.map { it.substringAfter("' : ").substringBefore(' ') }.toSet().size shouldBe RoutingSample.tickets.size
    }
}
