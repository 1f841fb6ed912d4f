package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.CheckpointRecord;
import dev.trellis.checkpoint.CheckpointStore;
import dev.trellis.checkpoint.FencedOutException;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.checkpoint.Lease;
import dev.trellis.checkpoint.RunInfo;
import dev.trellis.checkpoint.RunOwnedException;
import dev.trellis.graph.Graph;
import dev.trellis.runtime.CheckpointInfo;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A checkpoint store implemented in Java ({@link MapCheckpointStore}) carries runs through the facade. */
class AsyncCheckpointStoreTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    private static <T> T get(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(Fixtures.WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** draft -> approve (asks a human) */
    private Graph approval() {
        return JavaGraph.builder("approval", s.schema)
            .node("draft", ctx -> ctx.set(s.log, List.of("draft " + ctx.get(s.question))))
            .node("approve", ctx -> ctx.set(s.log, List.of("answer " + ctx.interrupt("Publish?"))))
            .start("draft")
            .edge("draft", "approve")
            .build();
    }

    @Test
    void aJavaStoreCheckpointsResumesForksPrunesAndDeletesRuns() throws Exception {
        MapCheckpointStore store = new MapCheckpointStore();
        TrellisRunner runner = Trellis.runner(approval(),
            JavaRunOptions.builder().checkpointing(new Checkpointing(store.asCheckpointStore())).build());

        RunResult paused = get(runner.invokeAsync(Map.of("question", "q")));
        assertEquals(Status.INTERRUPTED, paused.getStatus());
        assertTrue(store.appends.get() >= 2, "checkpoints went through the Java store: " + store.appends.get());

        RunResult done = get(runner.resumeAsync(paused.getRunId(), "yes"));
        assertEquals(Status.COMPLETED, done.getStatus());
        assertEquals(List.of("draft q", "answer yes"), done.getState().get(s.log));

        List<CheckpointInfo> history = get(runner.checkpointsAsync(paused.getRunId()));
        assertEquals("COMPLETED", history.get(history.size() - 1).getStatus());
        RunResult fork = get(runner.forkAsync(paused.getRunId(), history.get(0).getSequence()));
        assertEquals(Status.INTERRUPTED, fork.getStatus(), "the fork asks again");

        List<String> listed = get(runner.runsAsync()).stream().map(RunInfo::getRunId).sorted().toList();
        assertEquals(java.util.stream.Stream.of(paused.getRunId(), fork.getRunId()).sorted().toList(), listed);

        int pruned = get(runner.pruneAsync(paused.getRunId(), 1));
        assertTrue(pruned >= 1, "pruned " + pruned);
        assertEquals(history.size() - pruned, get(runner.checkpointsAsync(paused.getRunId())).size());

        get(runner.deleteAsync(paused.getRunId()));
        assertEquals(List.of(), get(runner.checkpointsAsync(paused.getRunId())));
        assertEquals(List.of(fork.getRunId()), get(runner.runsAsync()).stream().map(RunInfo::getRunId).toList());

        store.asCheckpointStore().close();
        assertTrue(store.closed);
    }

    @Test
    void theStoresOwnExceptionsReachTheRuntimeUnwrapped() throws Exception {
        MapCheckpointStore store = new MapCheckpointStore();
        CheckpointStore adapted = store.asCheckpointStore();
        Lease held = get(store.claim("taken", "someone-else"));
        TrellisRunner runner = Trellis.runner(approval(), JavaRunOptions.builder()
            .runId("taken").checkpointing(new Checkpointing(adapted)).build());

        ExecutionException e = assertThrows(ExecutionException.class, () -> get(runner.invokeAsync(Map.of("question", "q"))));
        RunOwnedException owned = assertInstanceOf(RunOwnedException.class, e.getCause());
        assertEquals("someone-else", owned.getOwner());

        // a write with a lease that was taken over is fenced out, through the adapter, as the runtime expects
        get(store.release(held));
        Lease stale = get(store.claim("taken", "first"));
        get(store.claim("taken", "first"));
        CheckpointRecord record = new CheckpointRecord("taken", 1, null, "approval", 1, Instant.now(), "RUNNING",
            CheckpointRecord.Kind.FULL, "{}");
        ExecutionException fenced = assertThrows(ExecutionException.class,
            () -> get(AsyncCheckpointStore.of(adapted).append(stale, record)));
        assertInstanceOf(FencedOutException.class, fenced.getCause());
    }

    @Test
    void aStoreReturningNullSaysWhichMethodDidIt() {
        AsyncCheckpointStore broken = new MapCheckpointStore() {
            @Override
            public CompletionStage<Optional<CheckpointRecord>> latest(String runId) {
                return CompletableFuture.completedFuture(null);
            }
        };
        TrellisRunner runner = Trellis.runner(approval(),
            JavaRunOptions.builder().checkpointing(new Checkpointing(broken.asCheckpointStore())).build());
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(runner.invokeAsync(Map.of("question", "q"))));
        Throwable cause = Failures.cause(e);
        assertInstanceOf(NullPointerException.class, cause);
        assertTrue(cause.getMessage().contains(".latest completed with null"), cause.getMessage());
        assertTrue(cause.getMessage().contains("Optional.empty()"), cause.getMessage());
    }

    @Test
    void aKotlinStoreSeenFromJavaAndBackIsTheSameStore() throws Exception {
        InMemoryCheckpointStore memory = new InMemoryCheckpointStore();
        AsyncCheckpointStore async = AsyncCheckpointStore.of(memory);
        assertSame(memory, async.asCheckpointStore());
        MapCheckpointStore java = new MapCheckpointStore();
        assertSame(java, AsyncCheckpointStore.of(java.asCheckpointStore()));

        Lease lease = get(async.claim("r1", "me"));
        CheckpointRecord first = new CheckpointRecord("r1", 1, null, "g", 1, Instant.now(), "RUNNING",
            CheckpointRecord.Kind.FULL, "{}");
        get(async.append(lease, first));
        assertEquals(Optional.of(first), get(async.latest("r1")));
        assertEquals(Optional.empty(), get(async.get("r1", 2)));
        assertEquals(List.of(first), get(async.history("r1")));
        assertEquals(1, get(async.runs()).size());
        assertEquals(0, get(async.prune("r1", 1)));
        Lease renewed = get(async.renew(lease));
        assertEquals(lease.getEpoch(), renewed.getEpoch());
        get(async.release(renewed));
        get(async.delete("r1"));
        assertEquals(Optional.empty(), get(async.latest("r1")));
        assertThrows(ExecutionException.class, () -> get(async.prune("r1", 0)));
    }

    @Test
    void aRunWhoseStoreFailsFailsWithTheStoresException() throws Exception {
        IllegalStateException disk = new IllegalStateException("disk full");
        AsyncCheckpointStore failing = new MapCheckpointStore() {
            @Override
            public CompletionStage<Void> append(Lease lease, CheckpointRecord record) {
                return CompletableFuture.failedFuture(disk);
            }
        };
        TrellisRunner runner = Trellis.runner(approval(),
            JavaRunOptions.builder().checkpointing(new Checkpointing(failing.asCheckpointStore())).build());
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(runner.invokeAsync(Map.of("question", "q"))));
        assertSame(disk, Failures.cause(e));
        assertEquals(Status.FAILED, Failures.result(e).orElseThrow().getStatus());
        assertInstanceOf(GraphRunException.class, e.getCause());
    }
}
