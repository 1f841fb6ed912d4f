package dev.trellis.samples.docs.observability

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.opentelemetry.TrellisTelemetry
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.runtime.toMermaid
import dev.trellis.studio.timeline.RunTimeline
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.io.ByteArrayOutputStream
import java.io.PrintStream
import java.nio.file.Files
import java.nio.file.Path

/** The Kotlin examples of `docs/observability.md`, as the guide shows them, run and checked. */
class ObservabilityGuideTest {
    object Research : StateSchema("research") {
        val question = key<String>("question")
        val notes = key("notes", default = "")
    }

    private val graph = graph("research", Research) {
        val search = node("search") { set(Research.notes, "notes on ${get(Research.question)}") }
        val write = node("write") { set(Research.notes, get(Research.notes) + ", written") }
        start(search)
        search then write
    }

    @AfterEach
    fun removeThePage() {
        Files.deleteIfExists(Path.of("run.html"))
    }

    @Test
    fun `a run's timeline page is written from its events, and its Mermaid text shows the statuses`(): Unit = runBlocking {
        val input = stateOf(Research.question to "sky")
        val printed = ByteArrayOutputStream()
        val out = System.out
        System.setOut(PrintStream(printed, true, Charsets.UTF_8))
        try {
            val events = graph.events(input).toList() // or collect them as you show them
            RunTimeline.of(graph, events).writeHtml(Path.of("run.html"))
            println(graph.toMermaid(events.filterIsInstance<RunEvent.Terminal>().single().result)) // with statuses
        } finally {
            System.setOut(out)
        }
        Files.readString(Path.of("run.html")) shouldContain "data-node=\"search\""
        printed.toString(Charsets.UTF_8) shouldContain "flowchart"
    }

    @Test
    fun `the autoconfigured SDK traces runs through TrellisTelemetry`(): Unit = runBlocking {
        for (signal in listOf("traces", "metrics", "logs")) System.setProperty("otel.$signal.exporter", "none")
        try {
            val sdk = AutoConfiguredOpenTelemetrySdk.initialize().openTelemetrySdk // or, with the agent, the global one
            val telemetry = TrellisTelemetry(sdk)
            telemetry.invoke(graph, stateOf(Research.question to "sea")).status shouldBe Status.COMPLETED
            sdk.close()
        } finally {
            GlobalOpenTelemetry.resetForTest()
            for (signal in listOf("traces", "metrics", "logs")) System.clearProperty("otel.$signal.exporter")
        }
    }
}
