package dev.trellis.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.NodeOptions;
import dev.trellis.javaapi.RetryPolicy;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import org.junit.jupiter.api.Test;

/** The README's "Java in 15 lines" example, verbatim between the markers: it must compile and run. */
class ReadmeJavaExampleTest {
    private static String fetchNews(String topic) {
        return "news: " + topic;
    }

    @Test
    void theReadmeExampleRuns() {
        // README start
        StateSchema schema = new StateSchema("java-sample");
        StateKey<String> topic = Keys.required(schema, "topic", String.class);
        StateKey<List<String>> findings = Keys.appending(schema, "findings", String.class);
        StateKey<Integer> round = Keys.of(schema, "round", Integer.class, 0);
        Graph graph = JavaGraph.builder("java-sample", schema)
            .node("web", ctx -> ctx.set(findings, List.of("web: " + ctx.get(topic))))
            .node("news", ctx -> ctx.set(findings, List.of(fetchNews(ctx.get(topic)))),
                  NodeOptions.retry(RetryPolicy.fixed(2, Duration.ofMillis(20))))
            .node("revise", ctx -> ctx.update(round, r -> r + 1))
            .start("web", "news")
            .edge("web", "revise").edge("news", "revise")                   // revise joins both
            .route("revise", List.of("revise", Graph.END), s -> s.get(round) < 3 ? "revise" : Graph.END)
            .build();
        TrellisRunner runner = Trellis.runner(graph);
        CompletableFuture<RunResult> done = runner.invokeAsync(Map.of("topic", "Why is the sky blue?"));
        Flow.Publisher<RunEvent> events = runner.events(Map.of("topic", "Why?"));  // done.cancel(true) cancels
        // README end

        RunResult result = done.join();
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(3, result.getState().get(round));
        assertEquals(3, result.node("revise").getExecutions());
        assertEquals(2, result.getState().get(findings).size());
        assertEquals(schema, graph.getSchema());
        assertEquals(true, events != null);
    }
}
