package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.checkpoint.RunInfo;
import dev.trellis.graph.Graph;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Listing, pruning and deleting runs from Java, and error messages that name the Java calls. */
class RunLifecycleTest {
    private final Fixtures.Schema s = new Fixtures.Schema();
    private final InMemoryCheckpointStore store = new InMemoryCheckpointStore();

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(Fixtures.WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private Graph approval(String id) {
        return JavaGraph.builder(id, s.schema)
            .node("draft", ctx -> ctx.set(s.log, List.of("draft")))
            .node("approve", ctx -> ctx.set(s.log, List.of(ctx.interrupt("Publish?"))))
            .start("draft")
            .edge("draft", "approve")
            .build();
    }

    private TrellisRunner runner(String graphId, String runId) {
        return Trellis.runner(approval(graphId),
            JavaRunOptions.builder().runId(runId).checkpointing(new Checkpointing(store)).build());
    }

    @Test
    void runsArePrunedListedAndDeleted() throws Exception {
        TrellisRunner runner = runner("lifecycle", null);
        RunResult first = get(runner.invokeAsync(Map.of("question", "q")));
        RunResult done = get(runner.resumeAsync(first.getRunId(), "yes"));
        RunResult second = get(runner.invokeAsync(Map.of("question", "q")));
        get(runner("other-graph", "other").invokeAsync(Map.of("question", "q")));

        List<RunInfo> runs = get(runner.runsAsync());
        assertEquals(List.of(first.getRunId(), second.getRunId()).stream().sorted().toList(),
            runs.stream().map(RunInfo::getRunId).toList(), "only this graph's runs");
        RunInfo info = runs.stream().filter(r -> r.getRunId().equals(done.getRunId())).findFirst().orElseThrow();
        assertEquals("COMPLETED", info.getLatestStatus());

        int before = get(runner.checkpointsAsync(done.getRunId())).size();
        int pruned = get(runner.pruneAsync(done.getRunId(), 1));
        assertTrue(pruned > 0 && pruned < before, pruned + " of " + before);
        assertEquals(before - pruned, get(runner.checkpointsAsync(done.getRunId())).size());
        IllegalArgumentException keepNone = assertThrows(IllegalArgumentException.class, () -> runner.pruneAsync(done.getRunId(), 0));
        assertTrue(keepNone.getMessage().contains("deleteAsync"), keepNone.getMessage());

        get(runner.deleteAsync(done.getRunId()));
        get(runner.deleteAsync("never-existed"));
        assertEquals(List.of(second.getRunId()), get(runner.runsAsync()).stream().map(RunInfo::getRunId).toList());
        // the id is free again
        RunResult again = get(runner("lifecycle", done.getRunId()).invokeAsync(Map.of("question", "q")));
        assertEquals(Status.INTERRUPTED, again.getStatus());
    }

    @Test
    void lifecycleCallsWithoutAStoreSayHowToSetOne() {
        TrellisRunner runner = Trellis.runner(approval("no-store"));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> runner.deleteAsync("r1"));
        assertTrue(e.getMessage().startsWith("deleteAsync needs a checkpoint store"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> runner.pruneAsync("r1", 1));
        assertThrows(IllegalStateException.class, () -> runner.runsAsync());
    }

    @Test
    void reusingTheIdOfAPausedRunSaysToResumeItTheJavaWay() throws Exception {
        get(runner("messages", "order-1").invokeAsync(Map.of("question", "q")));
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> get(runner("messages", "order-1").invokeAsync(Map.of("question", "q"))));
        String message = e.getCause().getMessage();
        assertTrue(message.contains("resume it with runner.resumeAsync(\"order-1\")"), message);
        assertTrue(message.contains("INTERRUPTED"), message);
        assertFalse(message.contains("graph.resume"), message);
    }

    @Test
    void reusingTheIdOfACompletedRunSaysToForkOrDeleteIt() throws Exception {
        TrellisRunner runner = runner("messages", "order-2");
        get(runner.invokeAsync(Map.of("question", "q")));
        get(runner.withOptions(runner.getOptions().newBuilder().runId(null).build()).resumeAsync("order-2", "yes"));

        ExecutionException e = assertThrows(ExecutionException.class, () -> get(runner.invokeAsync(Map.of("question", "q"))));
        IllegalStateException taken = assertInstanceOf(IllegalStateException.class, e.getCause());
        String message = taken.getMessage();
        assertTrue(message.contains("already ended COMPLETED"), message);
        assertTrue(message.contains("runner.forkAsync(\"order-2\", sequence)"), message);
        assertTrue(message.contains("runner.deleteAsync(\"order-2\")"), message);
        assertTrue(message.contains("JavaRunOptions.builder().runId(...)"), message);
        assertFalse(message.contains("resume it"), message);
        assertFalse(message.contains("graph."), message);

        // resuming it names the Java fork too
        ExecutionException resumed = assertThrows(ExecutionException.class,
            () -> get(runner.withOptions(runner.getOptions().newBuilder().runId(null).build()).resumeAsync("order-2")));
        assertTrue(resumed.getCause().getMessage().contains("runner.forkAsync(\"order-2\", sequence)"), resumed.getCause().getMessage());
        // and so does resuming it with an answer: the run's state is wrong, not the answer (IllegalStateException)
        ExecutionException answered = assertThrows(ExecutionException.class,
            () -> get(runner.withOptions(runner.getOptions().newBuilder().runId(null).build()).resumeAsync("order-2", "yes")));
        IllegalStateException ended = assertInstanceOf(IllegalStateException.class, answered.getCause());
        assertTrue(ended.getMessage().contains("already ended COMPLETED"), ended.getMessage());
        assertTrue(ended.getMessage().contains("runner.forkAsync(\"order-2\", sequence)"), ended.getMessage());
    }

    @Test
    void resumingWithSettingsNamingAnotherRunAndAmbiguousAnswersNameTheJavaCalls() throws Exception {
        Graph twoQuestions = JavaGraph.builder("two-questions", s.schema)
            .node("split", ctx -> {})
            .node("approve", ctx -> ctx.set(s.log, List.of(ctx.interrupt("Publish?"))))
            .node("legal", ctx -> ctx.set(s.log, List.of(ctx.interrupt("Legal ok?"))))
            .start("split").edge("split", "approve").edge("split", "legal")
            .build();
        TrellisRunner runner = Trellis.runner(twoQuestions, JavaRunOptions.builder().checkpointing(new Checkpointing(store)).build());
        RunResult paused = get(runner.invokeAsync(Map.of("question", "q")));
        assertEquals(2, paused.getInterrupts().size());

        ExecutionException ambiguous = assertThrows(ExecutionException.class, () -> get(runner.resumeAsync(paused.getRunId(), "yes")));
        assertTrue(ambiguous.getCause().getMessage().contains("runner.resumeAsync(\"" + paused.getRunId() + "\", Map.of("),
            ambiguous.getCause().getMessage());

        TrellisRunner pinned = runner.withOptions(runner.getOptions().newBuilder().runId("elsewhere").build());
        ExecutionException wrongId = assertThrows(ExecutionException.class, () -> get(pinned.resumeAsync(paused.getRunId())));
        assertTrue(wrongId.getCause().getMessage().contains("leave JavaRunOptions.builder().runId(...) unset"), wrongId.getCause().getMessage());

        RunResult done = get(runner.resumeAsync(paused.getRunId(), Map.of("approve", "yes", "legal", "ok")));
        assertEquals(Status.COMPLETED, done.getStatus());
    }

    @Test
    void theInMemoryStoreIsBoundedByDefault() throws Exception {
        assertEquals(InMemoryCheckpointStore.DEFAULT_MAX_RUNS, new InMemoryCheckpointStore().getMaxRuns());
        InMemoryCheckpointStore small = new InMemoryCheckpointStore(2);
        TrellisRunner runner = Trellis.runner(approval("bounded"),
            JavaRunOptions.builder().checkpointing(new Checkpointing(small)).build());
        RunResult first = get(runner.invokeAsync(Map.of("question", "q")));
        get(runner.resumeAsync(first.getRunId(), "yes"));          // ended: dropped first
        RunResult second = get(runner.invokeAsync(Map.of("question", "q")));
        RunResult third = get(runner.invokeAsync(Map.of("question", "q")));
        assertEquals(List.of(second.getRunId(), third.getRunId()).stream().sorted().toList(),
            get(runner.runsAsync()).stream().map(RunInfo::getRunId).toList());
    }
}
