package dev.trellis.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.NodeOptions;
import dev.trellis.graph.Retry;
import dev.trellis.runtime.RunOptions;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.junit5.OpenTelemetryExtension;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Java nodes see their node's span as current; the caller's {@code Context.current()} parents the run's span. */
class JavaTracingTest {
    @RegisterExtension
    static final OpenTelemetryExtension otel = OpenTelemetryExtension.create();

    private static final AttributeKey<String> NODE_ID = AttributeKey.stringKey("trellis.node.id");

    private final ExecutorService pool = Executors.newFixedThreadPool(2);

    @AfterEach
    void shutdown() {
        pool.shutdownNow();
    }

    /** What an LLM or HTTP client does in a node: a span of its own, a child of whatever is current. */
    private void clientCall(String name) {
        Tracer tracer = otel.getOpenTelemetry().getTracer("test");
        tracer.spanBuilder(name).startSpan().end();
    }

    private Graph graph() {
        StateSchema schema = new StateSchema("java-otel");
        StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
        StateKey<List<String>> topics = Keys.appending(schema, "topics", String.class);
        AtomicInteger searches = new AtomicInteger();
        return JavaGraph.builder("java-traced", schema)
            .executor(pool)
            .node("plan", ctx -> {
                clientCall("inline plan");
                ctx.set(log, List.of("plan"));
                ctx.set(topics, List.of("x", "y"));
            })
            // On the graph's executor, retried once: both attempts' spans are children of the execution's span.
            .blockingNode("search", ctx -> {
                clientCall("blocking search attempt " + ctx.getAttempt() + " on " + Thread.currentThread().getName());
                if (searches.getAndIncrement() == 0) throw new java.io.IOException("rate limited");
                ctx.set(log, List.of("search"));
            }, NodeOptions.retry(Retry.fixed(2, Duration.ofMillis(1))))
            // An async node: a span made in the action, and one made on the user's own pool with the context carried.
            .asyncNode("fetch", ctx -> {
                clientCall("async fetch");
                ctx.set(log, List.of("fetch"));
                return CompletableFuture.runAsync(() -> clientCall("async fetch on pool"), Context.current().wrap(pool));
            })
            // A map: each task's span is current in the task's body.
            .map("summarize", topics, (ctx, topic) -> {
                clientCall("llm " + topic);
                ctx.set(log, List.of("summary " + topic));
            })
            .start("plan")
            .edge("plan", "search")
            .edge("plan", "fetch")
            .edge("plan", "summarize")
            .build();
    }

    private static SpanData named(List<SpanData> spans, String prefix) {
        List<SpanData> found = spans.stream().filter(s -> s.getName().startsWith(prefix)).collect(Collectors.toList());
        assertEquals(1, found.size(), "spans named " + prefix + "*: " + found);
        return found.get(0);
    }

    private void assertNesting(List<SpanData> spans, Span request) {
        SpanData run = named(spans, "trellis.run java-traced");
        assertEquals(request.getSpanContext().getSpanId(), run.getParentSpanId());
        assertEquals(request.getSpanContext().getTraceId(), run.getTraceId());
        SpanData plan = named(spans, "trellis.node plan");
        SpanData search = named(spans, "trellis.node search");
        SpanData fetch = named(spans, "trellis.node fetch");
        for (SpanData node : List.of(plan, search, fetch)) assertEquals(run.getSpanId(), node.getParentSpanId());
        assertEquals(plan.getSpanId(), named(spans, "inline plan").getParentSpanId());
        SpanData first = named(spans, "blocking search attempt 1");
        SpanData second = named(spans, "blocking search attempt 2");
        assertEquals(search.getSpanId(), first.getParentSpanId());
        assertEquals(search.getSpanId(), second.getParentSpanId());
        assertTrue(first.getName().contains("pool-"), "ran on the graph's executor: " + first.getName());
        assertEquals(List.of("exception", "trellis.retry"),
            search.getEvents().stream().map(e -> e.getName()).collect(Collectors.toList()));
        assertEquals(fetch.getSpanId(), named(spans, "async fetch on pool").getParentSpanId());
        assertEquals(fetch.getSpanId(), spans.stream().filter(s -> s.getName().equals("async fetch")).findFirst()
            .orElseThrow().getParentSpanId());
        assertEquals("search", search.getAttributes().get(NODE_ID));
        SpanData summarize = named(spans, "trellis.node summarize");
        assertEquals(run.getSpanId(), summarize.getParentSpanId());
        for (int i = 0; i < 2; i++) {
            SpanData task = named(spans, "trellis.task summarize[" + i + "]");
            assertEquals(summarize.getSpanId(), task.getParentSpanId());
            assertEquals(task.getSpanId(), named(spans, "llm " + List.of("x", "y").get(i)).getParentSpanId());
        }
    }

    @Test
    void invokeBlockingParentsTheRunOnTheCallersContextAndNodeSpansAreCurrentInJavaNodes() {
        TrellisTelemetry telemetry = new TrellisTelemetry(otel.getOpenTelemetry());
        Graph graph = graph();
        Span request = otel.getOpenTelemetry().getTracer("test").spanBuilder("handle request").startSpan();
        RunResult result;
        try (Scope ignored = request.makeCurrent()) {
            result = telemetry.invokeBlocking(graph, graph.getSchema().initialState(), RunOptions.DEFAULT);
        } finally {
            request.end();
        }
        assertEquals(Status.COMPLETED, result.getStatus());
        assertNesting(otel.getSpans(), request);
    }

    @Test
    void invokeAsyncTakesTheCallersContextAtTheCall() throws Exception {
        TrellisTelemetry telemetry = new TrellisTelemetry(otel.getOpenTelemetry());
        Graph graph = graph();
        Span request = otel.getOpenTelemetry().getTracer("test").spanBuilder("handle request").startSpan();
        CompletableFuture<RunResult> done;
        try (Scope ignored = request.makeCurrent()) {
            done = telemetry.invokeAsync(graph);
        }
        // The scope is closed before the run ends: the run keeps the context of the call.
        RunResult result = done.get(10, java.util.concurrent.TimeUnit.SECONDS);
        request.end();
        assertEquals(Status.COMPLETED, result.getStatus());
        assertNesting(otel.getSpans(), request);
    }
}
