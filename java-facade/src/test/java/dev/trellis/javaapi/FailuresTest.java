package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.LimitExceededException;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class FailuresTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    private Graph failing(Exception error) {
        return JavaGraph.builder("failing", s.schema)
            .node("ok", ctx -> ctx.set(s.log, List.of("ok")))
            .node("boom", ctx -> {
                throw error;
            })
            .start("ok")
            .edge("ok", "boom")
            .build();
    }

    @Test
    void causeAndResultReachThroughEveryLayer() {
        java.io.IOException boom = new java.io.IOException("boom");
        TrellisRunner runner = Trellis.runner(failing(boom));

        CompletionException joined = assertThrows(CompletionException.class, () -> runner.invokeAsync(Map.of("question", "q")).join());
        assertSame(boom, Failures.cause(joined));
        RunResult result = Failures.result(joined).orElseThrow();
        assertEquals(Status.FAILED, result.getStatus());
        assertEquals(List.of("ok"), result.getState().get(s.log));

        ExecutionException got = assertThrows(ExecutionException.class, () -> runner.invokeAsync(Map.of("question", "q")).get());
        assertSame(boom, Failures.cause(got));
        assertTrue(Failures.result(got).isPresent());

        GraphRunException thrown = assertThrows(GraphRunException.class, () -> runner.invoke(Map.of("question", "q")));
        assertSame(boom, Failures.cause(thrown));
        assertSame(thrown.getResult(), Failures.result(thrown).orElseThrow());

        // in a pipeline, as documented
        Throwable handled = runner.invokeAsync(Map.of("question", "q")).handle((r, e) -> Failures.cause(e)).join();
        assertSame(boom, handled);
    }

    @Test
    void aLimitIsTheCauseOfARunItStopped() {
        Graph runaway = JavaGraph.builder("runaway", s.schema)
            .node("spin", ctx -> {})
            .start("spin")
            .route("spin", List.of("spin", Graph.END), state -> "spin")
            .maxNodeExecutions(3)
            .build();
        CompletionException e = assertThrows(CompletionException.class, () -> Trellis.runner(runaway).invokeAsync(Map.of()).join());
        LimitExceededException limit = (LimitExceededException) Failures.cause(e);
        assertTrue(limit.getMessage().contains("JavaGraph.Builder.maxNodeExecutions(...)"), limit.getMessage());
    }

    @Test
    void otherExceptionsAreReturnedAsTheyAre() {
        CancellationException cancelled = new CancellationException("cancelled");
        assertSame(cancelled, Failures.cause(cancelled));
        assertEquals(Optional.empty(), Failures.result(cancelled));
        IllegalStateException ended = new IllegalStateException("ended");
        assertSame(ended, Failures.cause(new CompletionException(ended)));
        assertSame(ended, Failures.cause(new ExecutionException(new CompletionException(ended))));
        CompletionException bare = new CompletionException("no cause", null);
        assertSame(bare, Failures.cause(bare));
        assertEquals(Optional.empty(), Failures.result(new CompletionException(ended)));
    }
}
