package dev.trellis.functional

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.opentelemetry.TrellisTelemetry
import io.kotest.matchers.shouldBe
import io.opentelemetry.sdk.testing.junit5.OpenTelemetryExtension
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension

/** A workflow call traced by `TrellisTelemetry`, the runtime's instrumentation, like a graph run. */
class WorkflowTracingTest {
    companion object {
        @JvmField
        @RegisterExtension
        val otel: OpenTelemetryExtension = OpenTelemetryExtension.create()
    }

    @Test
    fun `a workflow's run has a run span, its body a node span, and a client call in a task nests under it`(): Unit =
        runBlocking {
            val tracer = otel.openTelemetry.getTracer("test")
            val traced = workflow<String, String>("traced-flow") { topic ->
                task("search") {
                    tracer.spanBuilder("http search").startSpan().end()
                    "found $topic"
                }
            }
            val settings = WorkflowSettings.DEFAULT.withInstrumentation(TrellisTelemetry(otel.openTelemetry))
            traced.run("sky", InMemoryCheckpointStore(), "traced-1", settings) shouldBe "found sky"
            val spans = otel.spans
            val run = spans.single { it.name == "trellis.run traced-flow" }
            val node = spans.single { it.name == "trellis.node workflow" }
            node.parentSpanId shouldBe run.spanId
            spans.single { it.name == "http search" }.parentSpanId shouldBe node.spanId
        }
}
