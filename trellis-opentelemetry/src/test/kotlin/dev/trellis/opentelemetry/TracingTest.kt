package dev.trellis.opentelemetry

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.api.trace.Span
import io.opentelemetry.context.Context
import io.opentelemetry.extension.kotlin.asContextElement
import io.opentelemetry.sdk.testing.junit5.OpenTelemetryExtension
import io.opentelemetry.sdk.trace.data.SpanData
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension
import java.util.concurrent.Executors
import kotlin.time.Duration.Companion.milliseconds

/** Spans and metrics of traced runs (`docs/observability.md`). */
class TracingTest {
    companion object {
        @JvmField
        @RegisterExtension
        val otel: OpenTelemetryExtension = OpenTelemetryExtension.create()
    }

    object S : StateSchema("otel") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val answer = key("answer", default = "")
    }

    class Tokens(private val n: Long) : SpanEventPayload {
        override fun spanEventName() = "llm.tokens"

        override fun spanEventAttributes(): Attributes = Attributes.of(AttributeKey.longKey("tokens"), n)
    }

    private val tracer get() = otel.openTelemetry.getTracer("test")

    /** What an LLM client does inside a node: a span of its own, child of whatever is current. */
    private fun clientCall(name: String) = tracer.spanBuilder(name).startSpan().end()

    private val graph = graph("traced", S) {
        var failures = 0
        val plan = node("plan") {
            clientCall("llm plan")
            set(S.log, listOf("plan"))
        }
        val branches = (1..4).map { i ->
            node("search-$i") {
                delay(5.milliseconds) // resumes on another worker thread
                yield()
                clientCall("http search-$i")
                emit(Tokens(10L * i))
                emit("not a span event")
                set(S.log, listOf("s$i"))
            }
        }
        val flaky = node("flaky", retry = Retry.fixed(3, 1.milliseconds)) {
            clientCall("llm flaky attempt $attempt")
            if (failures++ == 0) error("rate limited")
            set(S.log, listOf("flaky"))
        }
        start(plan)
        for (b in branches) {
            plan then b
            b then flaky
        }
    }

    @Test
    fun `a traced run is one trace, run span under the caller's span, node spans under it, client spans under their node`() {
        val telemetry = TrellisTelemetry(otel.openTelemetry)
        val parent = tracer.spanBuilder("request").startSpan()
        val result =
            runBlocking(
                Dispatchers.Default + parent.storeInContext(
                    io.opentelemetry.context.Context.current(),
                ).asContextElement(),
            ) {
                telemetry.invoke(graph, options = RunOptions(dispatcher = Dispatchers.Default))
            }
        parent.end()
        result.status shouldBe Status.COMPLETED
        val spans = otel.spans
        spans.map { it.traceId }.toSet() shouldBe setOf(parent.spanContext.traceId)
        val run = spans.single { it.name == "trellis.run traced" }
        run.parentSpanId shouldBe parent.spanContext.spanId
        run.attributes[Attr.RUN_ID] shouldBe result.runId
        run.attributes[Attr.STATUS] shouldBe "COMPLETED"
        val nodes = spans.filter { it.name.startsWith("trellis.node ") }
        nodes.map { it.attributes[Attr.NODE_ID] } shouldContainExactlyInAnyOrder
            listOf("plan", "search-1", "search-2", "search-3", "search-4", "flaky")
        for (node in nodes) node.parentSpanId shouldBe run.spanId

        fun node(id: String): SpanData = nodes.single { it.attributes[Attr.NODE_ID] == id }
        spans.single { it.name == "llm plan" }.parentSpanId shouldBe node("plan").spanId
        for (i in 1..4) {
            spans.single { it.name == "http search-$i" }.parentSpanId shouldBe node("search-$i").spanId
            node("search-$i").events.map { it.name } shouldBe listOf("llm.tokens")
            node("search-$i").events.single().attributes[AttributeKey.longKey("tokens")] shouldBe 10L * i
        }
        // Retries: both attempts' client spans are children of the execution's span, which records the failure.
        spans.single { it.name == "llm flaky attempt 1" }.parentSpanId shouldBe node("flaky").spanId
        spans.single { it.name == "llm flaky attempt 2" }.parentSpanId shouldBe node("flaky").spanId
        node("flaky").attributes[Attr.ATTEMPT] shouldBe 2L
        node("flaky").attributes[Attr.STATUS] shouldBe "COMPLETED"
        node("flaky").events.map { it.name } shouldBe listOf("exception", "trellis.retry")
    }

    @Test
    fun `a resumed run links to the trace of the run it resumes, and checkpoints are measured`(): Unit = runBlocking {
        val telemetry = TrellisTelemetry(otel.openTelemetry)
        val store = telemetry.instrument(InMemoryCheckpointStore())
        val ask = graph("ask", S) {
            val draft = node("draft") { set(S.log, listOf("draft")) }
            val approve = node("approve") {
                clientCall("notify")
                set(S.answer, interrupt("ship it?"))
            }
            start(draft)
            draft then approve
        }
        val options = RunOptions(runId = "linked-1", checkpointing = Checkpointing(store))
        telemetry.invoke(ask, options = options).status shouldBe Status.INTERRUPTED
        val first = otel.spans.single { it.name == "trellis.run ask" }
        first.attributes[Attr.STATUS] shouldBe "INTERRUPTED"
        // One span event per checkpoint the run saved, then the interrupt.
        val saved = store.history("linked-1").size
        first.events.map { it.name } shouldBe List(saved) { "trellis.checkpoint" } + "trellis.interrupt"
        val approve = otel.spans.single { it.name == "trellis.node approve" }
        approve.attributes[Attr.STATUS] shouldBe "INTERRUPTED"
        approve.events.map { it.name } shouldBe listOf("trellis.interrupt")
        approve.events.single().attributes[Attr.PAYLOAD] shouldBe "ship it?"

        telemetry.resume(ask, "linked-1", options, mapOf("approve" to "yes")).status shouldBe Status.COMPLETED
        val second = otel.spans.filter { it.name == "trellis.run ask" }.single { it.spanId != first.spanId }
        second.links.single().spanContext.traceId shouldBe first.traceId
        second.links.single().spanContext.spanId shouldBe first.spanId

        val metrics = otel.metrics.associateBy { it.name }
        metrics.getValue("trellis.checkpoint.size").histogramData.points.sumOf { it.count } shouldBe
            store.history("linked-1").size.toLong()
        metrics.getValue("trellis.checkpoint.write.duration").histogramData.points.sumOf { it.count } shouldBe
            store.history("linked-1").size.toLong()
        val runs = metrics.getValue("trellis.runs").longSumData.points
        runs.associate { it.attributes[Attr.STATUS] to it.value } shouldBe mapOf("INTERRUPTED" to 1L, "COMPLETED" to 1L)
        metrics.getValue("trellis.runs.active").longSumData.points.single().value shouldBe 0L
    }

    @Test
    fun `metrics count node executions by status, retries and run durations`() {
        val telemetry = TrellisTelemetry(otel.openTelemetry)
        runBlocking { telemetry.invoke(graph) }
        val metrics = otel.metrics.associateBy { it.name }
        val executions = metrics.getValue("trellis.node.executions").longSumData.points
        executions.sumOf { it.value } shouldBe 6L
        executions.map { it.attributes[Attr.STATUS] }.toSet() shouldBe setOf("COMPLETED")
        metrics.getValue("trellis.node.retries").longSumData.points.single().value shouldBe 1L
        metrics.getValue("trellis.node.duration").histogramData.points.sumOf { it.count } shouldBe 6L
        metrics.getValue("trellis.run.duration").histogramData.points.single().count shouldBe 1L
    }

    @Test
    fun `a failed run's span records the error and the call throws as invoke does`() {
        val telemetry = TrellisTelemetry(otel.openTelemetry)
        val failing = graph("failing", S) {
            val a = node("a") { error("boom") }
            start(a)
        }
        val thrown = runCatching { runBlocking { telemetry.invoke(failing) } }.exceptionOrNull()
        (thrown is dev.trellis.runtime.GraphRunException) shouldBe true
        val run = otel.spans.single { it.name == "trellis.run failing" }
        run.status.statusCode shouldBe io.opentelemetry.api.trace.StatusCode.ERROR
        val node = otel.spans.single { it.name == "trellis.node a" }
        node.attributes[Attr.STATUS] shouldBe "FAILED"
        node.events.map { it.name } shouldBe listOf("exception")
    }

    @Test
    fun `a run started without telemetry makes no span`(): Unit = runBlocking {
        withContext(Dispatchers.Default) { graph.invoke() }.status shouldBe Status.COMPLETED
        Span.current().spanContext.isValid shouldBe false
        otel.spans.filter { it.name.startsWith("trellis.") } shouldBe emptyList()
    }

    @Test
    fun `while a traced run waits, other coroutines of its thread do not see its spans`() {
        val telemetry = TrellisTelemetry(otel.openTelemetry)
        val entered = CompletableDeferred<Unit>()
        val release = CompletableDeferred<Unit>()
        val waits = graph("waits", S) {
            val wait = node("wait") {
                entered.complete(Unit)
                release.await()
                set(S.log, listOf("released"))
            }
            start(wait)
        }
        val thread = Executors.newSingleThreadExecutor().asCoroutineDispatcher()
        try {
            runBlocking(thread) {
                val run = async { telemetry.invoke(waits) }
                entered.await()
                // This coroutine has no context element of its own: it sees what the thread holds, which must be
                // the caller's context (none here), not the context of the run waiting on the same thread.
                Context.current() shouldBe Context.root()
                release.complete(Unit)
                run.await().status shouldBe Status.COMPLETED
                Context.current() shouldBe Context.root()
            }
        } finally {
            thread.close()
        }
        otel.spans.single { it.name == "trellis.node wait" }.attributes[Attr.STATUS] shouldBe "COMPLETED"
    }
}
