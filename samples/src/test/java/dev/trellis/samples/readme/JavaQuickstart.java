package dev.trellis.samples.readme;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.NodeOptions;
import dev.trellis.graph.Retry;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;

public class JavaQuickstart {
    public static void main(String[] args) {
        StateSchema schema = new StateSchema("java-sample");
        StateKey<String> topic = Keys.required(schema, "topic", String.class);
        StateKey<List<String>> findings = Keys.appending(schema, "findings", String.class);
        StateKey<Integer> round = Keys.of(schema, "round", Integer.class, 0);
        Graph graph = JavaGraph.builder("java-sample", schema)
            .node("web", ctx -> ctx.set(findings, List.of("web: " + ctx.get(topic))))
            .node("news", ctx -> ctx.set(findings, List.of("news: " + ctx.get(topic))),
                  NodeOptions.retry(Retry.fixed(2, Duration.ofMillis(20))))
            .node("revise", ctx -> ctx.update(round, r -> r + 1))
            .start("web", "news")
            .edge("web", "revise").edge("news", "revise")                   // revise joins both
            .route("revise", List.of("revise", Graph.END), s -> s.get(round) < 3 ? "revise" : Graph.END)
            .build();
        TrellisRunner runner = Trellis.runner(graph);

        CompletableFuture<RunResult> done = runner.invokeAsync(Map.of("topic", "Why is the sky blue?"));
        RunResult result = done.join();                                     // done.cancel(true) cancels the run
        System.out.println(result.getStatus() + " after " + result.getState().get(round) + " rounds");

        CompletableFuture<Void> streamed = new CompletableFuture<>();     // the events of a second run
        runner.events(Map.of("topic", "Why?")).subscribe(new Flow.Subscriber<RunEvent>() {
            @Override public void onSubscribe(Flow.Subscription subscription) { subscription.request(Long.MAX_VALUE); }
            @Override public void onNext(RunEvent event) { System.out.println(event); }
            @Override public void onError(Throwable error) { streamed.completeExceptionally(error); }
            @Override public void onComplete() { streamed.complete(null); }
        });
        streamed.join();
    }
}
