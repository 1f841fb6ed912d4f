package dev.trellis.samples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.trellis.checkpoint.CheckpointStore;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.checkpoint.Lease;
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.AsyncCheckpointStore;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.CheckpointInfo;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.RunSnapshot;
import dev.trellis.runtime.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Java examples of {@code docs/persistence.md}, as the guide shows them, run and checked. */
class PersistenceGuideJavaTest {
    private final StateSchema schema = new StateSchema("order");
    private final StateKey<String> item = Keys.required(schema, "item", String.class);
    private final StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
    private final StateKey<String> tone = Keys.of(schema, "tone", String.class, "plain");
    private final AtomicInteger shipFailures = new AtomicInteger();

    @TempDir
    Path dir;

    /** pack -> approve (asks "ship?") -> ship (fails once when the item is "fragile") */
    private final Graph graph = JavaGraph.builder("shipping", schema)
        .node("pack", ctx -> ctx.set(log, List.of("packed " + ctx.get(item) + " " + ctx.get(tone))))
        .blockingNode("approve", ctx -> ctx.set(log, List.of("approved " + ctx.interrupt("Ship " + ctx.get(item) + "?"))))
        .node("ship", ctx -> {
            if (ctx.get(item).equals("fragile") && shipFailures.incrementAndGet() == 1) {
                throw new IllegalStateException("carrier down");
            }
            ctx.set(log, List.of("shipped"));
        })
        .start("pack")
        .edge("pack", "approve")
        .edge("approve", "ship")
        .build();

    @BeforeEach
    @AfterEach
    void removeTheGuidesDatabase() throws Exception {
        for (String suffix : List.of("", "-wal", "-shm")) Files.deleteIfExists(Path.of("runs.db" + suffix));
    }

    @Test
    void theOpeningExamplePausesARunAndResumesItWithTheAnswer() throws Exception {
        Map<String, Object> input = Map.of("item", "books");
        CheckpointStore store = new SqliteCheckpointStore(Path.of("runs.db"));
        JavaRunOptions settings = JavaRunOptions.builder().checkpointing(new Checkpointing(store)).build();
        RunResult paused = Trellis.runner(graph, settings.newBuilder().runId("order-42").build()).invoke(input);

        // later, in a new process (or after a crash):
        RunResult result = Trellis.runner(graph, settings).resumeAsync("order-42", "yes").join();
        assertEquals(Status.INTERRUPTED, paused.getStatus());
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(List.of("packed books plain", "approved yes", "shipped"), result.getState().get(log));
        store.close();
    }

    @Test
    void aResumeWithALeaseWaitTakesOverACrashedOwnersRunOnceItsLeaseLapsed() throws Exception {
        CheckpointStore store = new SqliteCheckpointStore(dir.resolve("runs.db"), Clock.systemUTC(), Duration.ofSeconds(1));
        JavaRunOptions first = JavaRunOptions.builder().runId("order-8").checkpointing(new Checkpointing(store)).build();
        assertEquals(Status.INTERRUPTED, Trellis.runner(graph, first).invoke(Map.of("item", "ink")).getStatus());
        // The process that resumed it died holding its lease: nobody renews it, it lapses after a second.
        Lease dead = AsyncCheckpointStore.of(store).claim("order-8", "crashed-worker").toCompletableFuture().join();
        String runId = "order-8";

        Checkpointing checkpointing = new Checkpointing(store).withLeaseWait(Duration.ofMinutes(1));
        TrellisRunner runner = Trellis.runner(graph, JavaRunOptions.builder().checkpointing(checkpointing).build());
        RunResult resumed = runner.resumeAsync(runId).join();
        assertEquals(Status.INTERRUPTED, resumed.getStatus()); // it asks again: no answer was given
        assertFalse(Instant.now().isBefore(dead.getExpiresAt()));
        assertEquals("approve", resumed.getInterrupts().get(0).getNodeId());
        store.close();
    }

    @Test
    void retryContinuesAFailedRunFromItsLastCheckpointBeforeTheFailure() throws Exception {
        TrellisRunner runner = Trellis.runner(
            graph, JavaRunOptions.builder().checkpointing(new Checkpointing(new InMemoryCheckpointStore())).build());
        RunResult paused = runner.invoke(Map.of("item", "fragile"));
        String runId = paused.getRunId();
        CompletionException failed = assertThrows(CompletionException.class, () -> runner.resumeAsync(runId, "yes").join());
        assertEquals("carrier down", failed.getCause().getCause().getMessage());

        RunResult result = runner.retryAsync(runId).join();     // Java; runner.retryEvents(runId) as a Flow.Publisher
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(List.of("packed fragile plain", "approved yes", "shipped"), result.getState().get(log));
    }

    @Test
    void timeTravelListsARunsCheckpointsReadsTheStateAtOneAndForksFromIt() throws Exception {
        TrellisRunner runner = Trellis.runner(
            graph, JavaRunOptions.builder().checkpointing(new Checkpointing(new InMemoryCheckpointStore())).build());
        String runId = runner.invoke(Map.of("item", "tea")).getRunId();
        runner.resumeAsync(runId, "yes").join();

        List<CheckpointInfo> history = runner.checkpointsAsync(runId).join();
        State then = runner.stateAtAsync(runId, history.get(1).getSequence()).join();
        RunResult fork = runner.forkAsync(runId, history.get(0).getSequence(), s -> s.with(tone, "formal")).join();
        assertEquals(List.of("packed tea plain"), then.get(log));
        assertEquals(Status.INTERRUPTED, fork.getStatus()); // approve asks the fork again
        assertEquals(List.of("packed tea formal"), fork.getState().get(log));
        assertEquals(runId, runner.checkpointsAsync(fork.getRunId()).join().get(0).getForkedFrom().getRunId());
    }

    @Test
    void aSnapshotLeavesTheStoreAsJsonAndResumesAsANewRun() throws Exception {
        TrellisRunner runner = Trellis.runner(
            graph, JavaRunOptions.builder().checkpointing(new Checkpointing(new InMemoryCheckpointStore())).build());
        String runId = runner.invoke(Map.of("item", "cups")).getRunId();

        RunSnapshot snapshot = runner.takeSnapshotAsync(runId).join();
        String json = snapshot.toJson();
        RunResult result = runner.resumeAsync(runner.loadSnapshot(json)).join();   // a new run where it was
        assertEquals(Status.INTERRUPTED, result.getStatus()); // approve asks again: a snapshot carries no answers
        assertEquals(List.of("packed cups plain"), result.getState().get(log));
    }
}
