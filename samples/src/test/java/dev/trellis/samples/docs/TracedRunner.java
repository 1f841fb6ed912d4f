package dev.trellis.samples.docs;

import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.opentelemetry.TrellisTelemetry;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunResult;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.nio.file.Path;
import java.util.Map;

public class TracedRunner {
    public static void main(String[] args) throws Exception {
        OpenTelemetry otel = AutoConfiguredOpenTelemetrySdk.initialize().getOpenTelemetrySdk();
        System.out.println(research(otel, Path.of("runs.db")).getStatus());
    }

    public static RunResult research(OpenTelemetry otel, Path database) throws Exception {
        TrellisTelemetry telemetry = new TrellisTelemetry(otel);
        Tracer tracer = otel.getTracer("my-service");
        StateSchema schema = new StateSchema("research");
        StateKey<String> results = Keys.of(schema, "results", String.class, "");
        Graph graph = JavaGraph.builder("research", schema)
            .blockingNode("search", ctx -> {
                // Runs on the graph's executor; the node's span is current here, so this span is its child.
                Span call = tracer.spanBuilder("http search").startSpan();
                try { ctx.set(results, "42 pages"); } finally { call.end(); }
            })
            .start("search")
            .build();
        try (SqliteCheckpointStore store = new SqliteCheckpointStore(database)) {
            JavaRunOptions settings = JavaRunOptions.builder()
                .checkpointing(new Checkpointing(telemetry.instrument(store)))   // checkpoint metrics, resume links
                .instrumentation(telemetry)                                     // every run of the runner is traced
                .build();
            TrellisRunner runner = Trellis.runner(graph, settings);
            Span request = tracer.spanBuilder("handle request").startSpan();
            try (Scope ignored = request.makeCurrent()) {
                // The run's span is a child of "handle request"; invokeAsync takes the context at the call too.
                return runner.invoke(Map.of());
            } finally {
                request.end();
            }
        }
    }
}
