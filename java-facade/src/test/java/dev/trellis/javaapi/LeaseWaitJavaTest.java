package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.CheckpointStore;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.checkpoint.Lease;
import dev.trellis.checkpoint.RunOwnedException;
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.FlowAdapters;

/**
 * Resuming a run another process holds, from Java ({@code docs/persistence.md}, "Resuming after a crash"): with
 * {@code Checkpointing.withLeaseWait}, {@code resumeAsync} and {@code resumeEvents} wait for a crashed owner's lease
 * to lapse and take the run over, never before; an owner that keeps renewing is refused after the wait. Real short
 * leases (one second), on the in-memory store and on SQLite.
 */
class LeaseWaitJavaTest {
    private static final Duration LEASE = Duration.ofSeconds(2);

    private final Fixtures.Schema s = new Fixtures.Schema();
    private final List<Instant> approvedAt = new CopyOnWriteArrayList<>();

    @TempDir
    Path dir;

    /** draft -> approve (asks a human) */
    private Graph approval() {
        return JavaGraph.builder("lease-wait", s.schema)
            .node("draft", ctx -> ctx.set(s.log, List.of("draft")))
            .blockingNode("approve", ctx -> {
                String answer = ctx.interrupt("Send it?");
                approvedAt.add(Instant.now());
                ctx.set(s.log, List.of("approved " + answer));
            })
            .start("draft")
            .edge("draft", "approve")
            .build();
    }

    /** A store with two-second leases: one instance for "memory", another process's view of one file for "sqlite". */
    private CheckpointStore store(String kind, CheckpointStore shared) {
        if (kind.equals("memory")) return shared;
        return new SqliteCheckpointStore(dir.resolve("runs.db"), Clock.systemUTC(), LEASE);
    }

    private CheckpointStore firstStore(String kind) {
        if (kind.equals("memory")) return new InMemoryCheckpointStore(Clock.systemUTC(), LEASE);
        return new SqliteCheckpointStore(dir.resolve("runs.db"), Clock.systemUTC(), LEASE);
    }

    private TrellisRunner runner(CheckpointStore store, Duration leaseWait) {
        Checkpointing checkpointing = new Checkpointing(store).withLeaseWait(leaseWait);
        return Trellis.runner(approval(), JavaRunOptions.builder().checkpointing(checkpointing).build());
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(60, TimeUnit.SECONDS);
    }

    private String pausedRun(CheckpointStore store) throws Exception {
        RunResult paused = get(runner(store, Duration.ZERO).invokeAsync(Map.of("question", "q")));
        assertEquals(Status.INTERRUPTED, paused.getStatus());
        return paused.getRunId();
    }

    @Test
    void aLeaseWaitIsKeptBySettingsAndMustNotBeNegative() {
        Checkpointing checkpointing = new Checkpointing(new InMemoryCheckpointStore()).withLeaseWait(Duration.ofSeconds(45));
        assertEquals(Duration.ofSeconds(45), checkpointing.getLeaseWait());
        assertEquals(Duration.ZERO, new Checkpointing(new InMemoryCheckpointStore()).getLeaseWait());
        IllegalArgumentException negative = assertThrows(
            IllegalArgumentException.class, () -> checkpointing.withLeaseWait(Duration.ofSeconds(-1)));
        assertTrue(negative.getMessage().contains("leaseWait must not be negative"), negative.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "sqlite"})
    void aResumeWaitsForACrashedOwnersLeaseToLapseThenTakesTheRunOver(String kind) throws Exception {
        CheckpointStore first = firstStore(kind);
        String runId = pausedRun(first);
        // Another process resumed the run and died: its lease is never renewed.
        Lease dead = AsyncCheckpointStore.of(store(kind, first)).claim(runId, "crashed-worker").toCompletableFuture().join();

        ExecutionException refused = assertThrows(
            ExecutionException.class, () -> get(runner(store(kind, first), Duration.ZERO).resumeAsync(runId, "yes")));
        RunOwnedException owned = assertInstanceOf(RunOwnedException.class, refused.getCause());
        assertEquals("crashed-worker", owned.getOwner());
        assertEquals(Duration.ZERO, owned.getWaited());

        RunResult done = get(runner(store(kind, first), Duration.ofSeconds(30)).resumeAsync(runId, "yes"));
        assertEquals(Status.COMPLETED, done.getStatus());
        assertEquals(List.of("draft", "approved yes"), done.getState().get(s.log));
        assertEquals(1, approvedAt.size());
        assertTrue(!approvedAt.get(0).isBefore(dead.getExpiresAt()), approvedAt + " before " + dead.getExpiresAt());
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "sqlite"})
    void aResumeOfARunWhoseOwnerKeepsRenewingIsRefusedAfterTheWait(String kind) throws Exception {
        CheckpointStore first = firstStore(kind);
        String runId = pausedRun(first);
        AsyncCheckpointStore live = AsyncCheckpointStore.of(store(kind, first));
        AtomicReference<Lease> lease = new AtomicReference<>(live.claim(runId, "live-worker").toCompletableFuture().join());
        ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor();
        renewer.scheduleWithFixedDelay(
            () -> lease.set(live.renew(lease.get()).toCompletableFuture().join()), 200, 200, TimeUnit.MILLISECONDS);
        try {
            long started = System.nanoTime();
            ExecutionException refused = assertThrows(
                ExecutionException.class,
                () -> get(runner(store(kind, first), Duration.ofSeconds(2)).resumeAsync(runId, "yes")));
            assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(Duration.ofSeconds(2)) >= 0);
            RunOwnedException owned = assertInstanceOf(RunOwnedException.class, refused.getCause());
            assertEquals("live-worker", owned.getOwner());
            assertEquals(Duration.ofSeconds(2), owned.getWaited());
            assertTrue(owned.getMessage().contains("waited PT2S"), owned.getMessage());

            Fixtures.Recorder recorder = new Fixtures.Recorder();
            runner(store(kind, first), Duration.ofSeconds(1)).resumeEvents(runId, "yes")
                .subscribe(FlowAdapters.toFlowSubscriber(recorder));
            recorder.request(Long.MAX_VALUE);
            recorder.awaitDone();
            RunOwnedException streamed = assertInstanceOf(RunOwnedException.class, recorder.error);
            assertEquals(Duration.ofSeconds(1), streamed.getWaited());
            assertEquals(List.of(), approvedAt);
        } finally {
            renewer.shutdownNow();
        }
    }
}
