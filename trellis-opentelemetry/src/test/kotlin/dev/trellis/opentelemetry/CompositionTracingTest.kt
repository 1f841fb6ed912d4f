package dev.trellis.opentelemetry

import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.opentelemetry.sdk.testing.junit5.OpenTelemetryExtension
import io.opentelemetry.sdk.trace.data.SpanData
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension
import kotlin.time.Duration.Companion.milliseconds

/** Child runs' nodes and map tasks nest under their subgraph or map node's span (`docs/observability.md`). */
class CompositionTracingTest {
    companion object {
        @JvmField
        @RegisterExtension
        val otel: OpenTelemetryExtension = OpenTelemetryExtension.create()
    }

    object Outer : StateSchema("otel-outer") {
        val items = key("items", default = listOf("a", "b", "c"))
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    object Inner : StateSchema("otel-inner") {
        val item = key("item", default = "")
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val tracer get() = otel.openTelemetry.getTracer("test")

    private fun clientCall(name: String) = tracer.spanBuilder(name).startSpan().end()

    private val inner = graph("inner", Inner) {
        val fetch = node("fetch") {
            delay(2.milliseconds)
            clientCall("http fetch ${state[Inner.item]}")
            set(Inner.log, listOf("fetch ${state[Inner.item]}"))
        }
        val read = node("read") { set(Inner.log, listOf("read")) }
        start(fetch)
        fetch then read
    }

    private val outer = graph("outer", Outer) {
        var failures = 0
        val research = subgraph("research", inner) {
            input { set(Inner.item, "r") }
            output(Inner.log, Outer.log)
        }
        val summarize = map("summarize", over = Outer.items, retry = Retry.fixed(2, 1.milliseconds)) { item ->
            clientCall("llm $item") // in each attempt: a child of the task's span
            if (item == "b" && failures++ == 0) error("flaky b")
            set(Outer.log, listOf("summary $item"))
        }
        val deep = map("deep", over = Outer.items, graph = inner) {
            input { set(Inner.item, item) }
            output(Inner.log, Outer.log)
        }
        start(research)
        research then summarize
        summarize then deep
    }

    @Test
    fun `child runs' nodes and map tasks get spans under their subgraph or map node's span`() {
        val telemetry = TrellisTelemetry(otel.openTelemetry)
        val result = runBlocking {
            telemetry.invoke(outer, options = RunOptions(dispatcher = Dispatchers.Default))
        }
        result.status shouldBe Status.COMPLETED
        val spans = otel.spans
        spans.map { it.traceId }.toSet().size shouldBe 1

        fun span(name: String): SpanData = spans.single { it.name == name }
        val run = span("trellis.run outer")
        run.parentSpanId shouldBe io.opentelemetry.api.trace.SpanId.getInvalid()
        for (id in listOf("research", "summarize", "deep")) span("trellis.node $id").parentSpanId shouldBe run.spanId

        // The subgraph node's child run: its nodes' spans are children of the subgraph node's span.
        val research = span("trellis.node research")
        for (id in listOf("fetch", "read")) {
            val node = span("trellis.node research/$id")
            node.parentSpanId shouldBe research.spanId
            node.attributes[Attr.PATH] shouldBe "research/$id"
            node.attributes[Attr.STATUS] shouldBe "COMPLETED"
        }
        span("http fetch r").parentSpanId shouldBe span("trellis.node research/fetch").spanId

        // A map of body tasks: one span per task under the map node's span; a failed attempt is recorded and retried.
        val summarize = span("trellis.node summarize")
        val tasks = spans.filter { it.name.startsWith("trellis.task summarize[") }
        tasks.map { it.attributes[Attr.TASK] } shouldContainExactlyInAnyOrder listOf(0L, 1L, 2L)
        for (task in tasks) {
            task.parentSpanId shouldBe summarize.spanId
            task.attributes[Attr.STATUS] shouldBe "COMPLETED"
        }
        span("trellis.task summarize[1]").events.map { it.name } shouldBe listOf("exception", "trellis.retry")
        span("trellis.task summarize[1]").attributes[Attr.ATTEMPT] shouldBe 2L
        // The task's span is current in its body, in every attempt (the second attempt of task 1 too).
        for ((i, item) in listOf("a", "b", "c").withIndex()) {
            val calls = spans.filter { it.name == "llm $item" }
            calls.size shouldBe if (item == "b") 2 else 1
            for (call in calls) call.parentSpanId shouldBe span("trellis.task summarize[$i]").spanId
        }
        // The map task's retry is counted by the node's retries metric.
        otel.metrics.single { it.name == "trellis.node.retries" }.longSumData.points.single().let {
            it.value shouldBe 1L
            it.attributes[Attr.NODE_ID] shouldBe "summarize"
        }

        // A map of subgraph tasks: task spans under the map node's span, each task's child run's nodes under it.
        val deep = span("trellis.node deep")
        for ((i, item) in listOf("a", "b", "c").withIndex()) {
            val task = span("trellis.task deep[$i]")
            task.parentSpanId shouldBe deep.spanId
            task.attributes[Attr.STATUS] shouldBe "COMPLETED"
            val fetch = span("trellis.node deep[$i]/fetch")
            fetch.parentSpanId shouldBe task.spanId
            span("trellis.node deep[$i]/read").parentSpanId shouldBe task.spanId
            span("http fetch $item").parentSpanId shouldBe fetch.spanId
        }
        // Every span ended: nothing left open by the nesting.
        spans.size shouldBe 1 + 3 + 2 + 3 + 4 + 3 * 3 + 1 + 3
    }
}
