package dev.trellis.samples

import dev.trellis.runtime.Status
import dev.trellis.samples.docs.TracedRunner
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path

/**
 * The complete programs shown in `docs/`: each one listed here is one of the `docs` sources of these tests,
 * verbatim but for the package line, so it compiles as written; here it is run and its effect checked.
 */
class DocSnippetsTest {
    private val module = Path.of("").toAbsolutePath()

    @TempDir
    lateinit var dir: Path

    /** The text of the ```[language] blocks of the doc at [doc], in order. */
    private fun blocks(doc: String, language: String): List<String> =
        Regex("^```$language\\n(.*?)^```$", setOf(RegexOption.MULTILINE, RegexOption.DOT_MATCHES_ALL))
            .findAll(Files.readString(module.resolveSibling(doc)))
            .map { it.groupValues[1] }
            .toList()

    /** A test source file as the doc shows it: without its package line and the blank line after it. */
    private fun snippet(path: String): String {
        val text = Files.readString(module.resolve("src/test").resolve(path))
        text shouldStartWith "package "
        return text.substringAfter("\n").removePrefix("\n")
    }

    @Test
    fun `the Java program of the observability guide is a compiled source file, verbatim`() {
        blocks("docs/observability.md", "java") shouldContain snippet("java/dev/trellis/samples/docs/TracedRunner.java")
    }

    @Test
    fun `the observability guide's Java program traces its runner's run under the caller's span`() {
        val exporter = InMemorySpanExporter.create()
        val sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build(),
            )
            .build()
        TracedRunner.research(sdk, dir.resolve("runs.db")).status shouldBe Status.COMPLETED
        val spans = exporter.finishedSpanItems.associateBy { it.name }
        spans.getValue("trellis.run research").parentSpanId shouldBe spans.getValue("handle request").spanId
        spans.getValue("trellis.node search").parentSpanId shouldBe spans.getValue("trellis.run research").spanId
        spans.getValue("http search").parentSpanId shouldBe spans.getValue("trellis.node search").spanId
    }
}
