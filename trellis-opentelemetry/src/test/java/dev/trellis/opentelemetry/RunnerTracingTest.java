package dev.trellis.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Java run configured with {@code JavaRunOptions} — a SQLite store, checkpoints, an interrupt and a resume — is traced
 * through {@code JavaRunOptions.builder().instrumentation(telemetry)}, and its spans reach a real OTLP/HTTP receiver
 * through the real OTLP HTTP exporter.
 */
class RunnerTracingTest {
    @TempDir
    Path dir;

    private static Graph graph() {
        StateSchema schema = new StateSchema("runner-otel");
        StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
        return JavaGraph.builder("runner-traced", schema)
            .node("draft", ctx -> ctx.set(log, List.of("draft")))
            .blockingNode("approve", ctx -> ctx.set(log, List.of("approved " + ctx.interrupt("Publish?"))))
            .start("draft")
            .edge("draft", "approve")
            .build();
    }

    @Test
    void aRunnerWithInstrumentationTracesItsRunsToAnOtlpHttpEndpoint() throws Exception {
        try (OtlpReceiver receiver = new OtlpReceiver();
             SqliteCheckpointStore sqlite = new SqliteCheckpointStore(dir.resolve("runs.db"))) {
            OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder()
                .setEndpoint(receiver.endpoint() + "/v1/traces")
                .build();
            OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build();
            TrellisTelemetry telemetry = new TrellisTelemetry(sdk);
            JavaRunOptions settings = JavaRunOptions.builder()
                .checkpointing(new Checkpointing(telemetry.instrument(sqlite)))
                .instrumentation(telemetry)
                .build();
            TrellisRunner runner = Trellis.runner(graph(), settings);

            Span request = sdk.getTracer("test").spanBuilder("handle request").startSpan();
            RunResult paused;
            try (Scope ignored = request.makeCurrent()) {
                paused = runner.invokeAsync(Map.of()).get(30, TimeUnit.SECONDS);
            } finally {
                request.end();
            }
            // The caller's thread is left as it was: a run it started is not current on it once the call returned.
            assertEquals(Context.root(), Context.current(), "the context of the caller's thread after invokeAsync");
            assertEquals(Status.INTERRUPTED, paused.getStatus());
            assertEquals(Status.INTERRUPTED, runner.invoke(Map.of()).getStatus()); // the blocking call is traced too
            assertEquals(Context.root(), Context.current(), "the context of the caller's thread after invoke");
            RunResult done = runner.resumeAsync(paused.getRunId(), "yes").get(30, TimeUnit.SECONDS);
            assertEquals(Status.COMPLETED, done.getStatus());
            assertTrue(sdk.getSdkTracerProvider().forceFlush().join(30, TimeUnit.SECONDS).isSuccess());
            sdk.close();

            List<OtlpReceiver.ReceivedSpan> spans = receiver.spans();
            List<String> names = spans.stream().map(OtlpReceiver.ReceivedSpan::name).collect(Collectors.toList());
            assertTrue(receiver.contentTypes().stream().allMatch(t -> t.startsWith("application/x-protobuf")),
                receiver.contentTypes().toString());
            OtlpReceiver.ReceivedSpan requestSpan = only(spans, "handle request");
            List<OtlpReceiver.ReceivedSpan> runs = spans.stream()
                .filter(s -> s.name().equals("trellis.run runner-traced")).collect(Collectors.toList());
            // invokeAsync's run, invoke's run and the resumed run.
            assertEquals(3, runs.size(), names.toString());
            OtlpReceiver.ReceivedSpan first = runs.stream()
                .filter(s -> s.parentSpanId().equals(requestSpan.spanId())).findFirst()
                .orElseThrow(() -> new AssertionError("no run span under the caller's span: " + spans));
            assertEquals(requestSpan.traceId(), first.traceId());
            OtlpReceiver.ReceivedSpan draft = spans.stream()
                .filter(s -> s.name().equals("trellis.node draft") && s.traceId().equals(first.traceId()))
                .findFirst().orElseThrow();
            assertEquals(first.spanId(), draft.parentSpanId(), spans.stream().map(x -> x.name()+" id="+x.spanId()+" parent="+x.parentSpanId()+" trace="+x.traceId()).collect(Collectors.joining("\n")));
            long approves = spans.stream().filter(s -> s.name().equals("trellis.node approve")).count();
            assertEquals(3, approves, names.toString());
        }
    }

    private static OtlpReceiver.ReceivedSpan only(List<OtlpReceiver.ReceivedSpan> spans, String name) {
        List<OtlpReceiver.ReceivedSpan> found = spans.stream().filter(s -> s.name().equals(name))
            .collect(Collectors.toList());
        assertEquals(1, found.size(), "spans named " + name + ": " + spans);
        return found.get(0);
    }
}
