package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.Retry;
import dev.trellis.graph.GraphValidationException;
import dev.trellis.graph.NodeError;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.NoRouteMatchedException;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.reactivestreams.FlowAdapters;

/** First-match routing and error routes from Java (docs/semantics.md §13.2, §13.3). */
class RoutesJavaTest {
    private final StateSchema schema = new StateSchema("routes");
    private final StateKey<Integer> score = Keys.of(schema, "score", Integer.class, 0);
    private final StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
    private final StateKey<NodeError> error = Keys.nodeError(schema, "error");

    private JavaGraph.Builder review() {
        return JavaGraph.builder("review", schema)
            .node("review", ctx -> ctx.set(log, List.of("review")))
            .node("high", ctx -> ctx.set(log, List.of("high")))
            .node("mid", ctx -> ctx.set(log, List.of("mid")))
            .start("review");
    }

    @Test
    void theFirstConditionThatHoldsWinsAndTheDefaultTakesTheRest() throws Exception {
        Graph graph = review()
            .node("low", ctx -> ctx.set(log, List.of("low")))
            .firstMatch("review", routes -> routes
                .on("high", s -> s.get(score) >= 8)
                .on("mid", s -> s.get(score) >= 5)
                .otherwise("low"))
            .build();
        TrellisRunner runner = Trellis.runner(graph);
        assertEquals(List.of("review", "high"), runner.invoke(Map.of("score", 9)).getState().get(log));
        assertEquals(List.of("review", "mid"), runner.invoke(Map.of("score", 6)).getState().get(log));
        assertEquals(List.of("review", "low"), runner.invoke(Map.of("score", 1)).getState().get(log));
    }

    @Test
    void noMatchEndsThePathOrFailsAsDeclared() throws Exception {
        Graph ends = review()
            .firstMatch("review", routes -> routes.on("high", s -> s.get(score) >= 8).on("mid", s -> false)
                .otherwise(Graph.END))
            .build();
        RunResult ended = Trellis.runner(ends).invoke(Map.of("score", 1));
        assertEquals(Status.COMPLETED, ended.getStatus());
        assertEquals(List.of("review"), ended.getState().get(log));

        Graph fails = review()
            .firstMatch("review", routes -> routes.on("high", s -> s.get(score) >= 8).on("mid", s -> false)
                .otherwiseFail())
            .build();
        GraphRunException thrown =
            assertThrows(GraphRunException.class, () -> Trellis.runner(fails).invoke(Map.of("score", 1)));
        NoRouteMatchedException cause = assertInstanceOf(NoRouteMatchedException.class, thrown.getCause());
        assertEquals("review", cause.getNodeId());
        assertEquals(List.of("high", "mid"), cause.getTargets());
    }

    @Test
    void buildRefusesAFirstMatchNodeThatDoesNotSayWhatHappensWhenNothingMatches() {
        GraphValidationException thrown = assertThrows(GraphValidationException.class, () -> review()
            .firstMatch("review", routes -> routes.on("high", s -> true).on("mid", s -> true))
            .build());
        assertTrue(thrown.getMessage().contains("does not say what happens when no condition holds"), thrown.getMessage());
    }

    @Test
    void aFailureGoesToItsHandlerAfterTheRetriesWithTheErrorInAKey() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        Graph graph = JavaGraph.builder("search", schema)
            .blockingNode("search", ctx -> {
                attempts.incrementAndGet();
                throw new IOException("search is down");
            }, NodeOptions.retry(Retry.fixed(3, Duration.ofMillis(1))))
            .node("fallback", ctx -> {
                NodeError failure = ctx.get(error);
                ctx.set(log, List.of("fallback: " + failure.getNode() + " " + failure.getMessage()
                    + " after " + failure.getAttempts()));
            })
            .start("search")
            .onFailure("search", "fallback", error)
            .build();
        Fixtures.Recorder recorder = new Fixtures.Recorder();
        Trellis.runner(graph).events(Map.of()).subscribe(FlowAdapters.toFlowSubscriber(recorder));
        recorder.request(Long.MAX_VALUE);
        recorder.awaitDone();
        List<RunEvent> events = List.copyOf(recorder.events);
        RunResult result = ((RunEvent.Terminal) events.get(events.size() - 1)).getResult();
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(3, attempts.get());
        assertEquals(List.of("fallback: search search is down after 3"), result.getState().get(log));
        assertEquals(new NodeError("search", IOException.class.getName(), "search is down", 3), result.getState().get(error));
        RunEvent.NodeFailed failed = events.stream().filter(RunEvent.NodeFailed.class::isInstance)
            .map(RunEvent.NodeFailed.class::cast).findFirst().orElseThrow();
        assertEquals("fallback", failed.getRoutedTo());
    }

    @Test
    void aGraphWideDefaultHandlerTakesEveryNodeWithoutItsOwn() throws Exception {
        Graph graph = JavaGraph.builder("default", schema)
            .node("a", ctx -> { throw new IllegalStateException("a broke"); })
            .node("handler", ctx -> ctx.set(log, List.of("handled " + ctx.get(error).getType())))
            .start("a")
            .defaultOnFailure("handler", error)
            .build();
        RunResult result = Trellis.runner(graph).invoke(Map.of());
        assertEquals(List.of("handled " + IllegalStateException.class.getName()), result.getState().get(log));
        assertEquals(Status.FAILED, result.node("a").getStatus());
    }
}
