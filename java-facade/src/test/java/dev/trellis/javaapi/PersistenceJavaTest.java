package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.CheckpointRef;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.runtime.CheckpointInfo;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.RunControl;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.RunSnapshot;
import dev.trellis.runtime.Status;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.FlowAdapters;

class PersistenceJavaTest {
    private final Fixtures.Schema s = new Fixtures.Schema();
    private final InMemoryCheckpointStore store = new InMemoryCheckpointStore();
    private final CountDownLatch started = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final CountDownLatch interrupted = new CountDownLatch(1);
    private final AtomicInteger firstRuns = new AtomicInteger();

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(Fixtures.WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private JavaRunOptions settings(dev.trellis.checkpoint.CheckpointStore store) {
        return JavaRunOptions.builder().checkpointing(new Checkpointing(store)).build();
    }

    /** draft -> approve (asks a human; "boom" fails it, "wait" blocks it) */
    private Graph approval() {
        return JavaGraph.builder("approval", s.schema)
            .node("draft", ctx -> ctx.set(s.log, List.of("draft " + ctx.get(s.question))))
            .blockingNode("approve", ctx -> {
                String answer = ctx.interrupt("Publish " + ctx.get(s.question) + "?");
                if (answer.equals("boom")) throw new IllegalStateException("boom");
                if (answer.equals("wait")) {
                    started.countDown();
                    try {
                        Thread.sleep(60_000);
                    } catch (InterruptedException e) {
                        interrupted.countDown();
                        throw e;
                    }
                }
                ctx.set(s.log, List.of("answer " + answer));
            })
            .start("draft")
            .edge("draft", "approve")
            .build();
    }

    /** first (blocks until released) -> second */
    private Graph twoSteps() {
        return JavaGraph.builder("two-steps", s.schema)
            .blockingNode("first", ctx -> {
                firstRuns.incrementAndGet();
                started.countDown();
                Fixtures.await(release, "release");
                ctx.update(s.count, c -> c + 1);
            })
            .node("second", ctx -> ctx.set(s.log, List.of("second " + ctx.get(s.question) + " " + ctx.get(s.count))))
            .start("first")
            .edge("first", "second")
            .build();
    }

    @Test
    void anInterruptedRunResumesWithTheAnswer() throws Exception {
        TrellisRunner runner = Trellis.runner(approval(), settings(store));

        RunResult paused = get(runner.invokeAsync(Map.of("question", "q")));
        assertEquals(Status.INTERRUPTED, paused.getStatus());
        assertEquals("approve", paused.getInterrupts().get(0).getNodeId());
        assertEquals("Publish q?", paused.getInterrupts().get(0).getPayload());

        RunResult done = get(runner.resumeAsync(paused.getRunId(), "yes"));
        assertEquals(Status.COMPLETED, done.getStatus());
        assertEquals(paused.getRunId(), done.getRunId());
        assertEquals(List.of("draft q", "answer yes"), done.getState().get(s.log));
    }

    @Test
    void resumeEventsStreamsTheContinuationWithTheAnswer() throws Exception {
        TrellisRunner runner = Trellis.runner(approval(), settings(store));
        RunResult paused = get(runner.invokeAsync(Map.of("question", "q")));
        assertEquals(Status.INTERRUPTED, paused.getStatus());

        Fixtures.Recorder recorder = new Fixtures.Recorder();
        runner.resumeEvents(paused.getRunId(), "yes").subscribe(FlowAdapters.toFlowSubscriber(recorder));
        recorder.request(Long.MAX_VALUE);
        recorder.awaitDone();
        assertNull(recorder.error);
        List<RunEvent> events = recorder.events;
        assertInstanceOf(RunEvent.RunStarted.class, events.get(0));
        RunEvent.RunCompleted last = assertInstanceOf(RunEvent.RunCompleted.class, events.get(events.size() - 1));
        assertEquals(List.of("draft q", "answer yes"), last.getResult().getState().get(s.log));
        // Only the interrupted node runs again; the completed one does not.
        List<String> started = events.stream()
            .filter(e -> e instanceof RunEvent.NodeStarted)
            .map(e -> ((RunEvent.NodeStarted) e).getNodeId())
            .toList();
        assertEquals(List.of("approve"), started);
    }

    @Test
    void resumeEventsOfAFinishedRunEndsWithOnError() throws Exception {
        TrellisRunner runner = Trellis.runner(approval(), settings(store));
        RunResult paused = get(runner.invokeAsync(Map.of("question", "q")));
        get(runner.resumeAsync(paused.getRunId(), "yes"));

        Fixtures.Recorder recorder = new Fixtures.Recorder();
        runner.resumeEvents(paused.getRunId()).subscribe(FlowAdapters.toFlowSubscriber(recorder));
        recorder.request(Long.MAX_VALUE);
        recorder.awaitDone();
        IllegalStateException error = assertInstanceOf(IllegalStateException.class, recorder.error);
        assertTrue(error.getMessage().contains(paused.getRunId()), error.getMessage());
        assertThrows(IllegalStateException.class, () -> Trellis.runner(approval()).resumeEvents("r"));
    }

    @Test
    void answersByNodeId() throws Exception {
        TrellisRunner runner = Trellis.runner(approval(), settings(store));
        RunResult paused = get(runner.invokeAsync(Map.of("question", "q")));

        RunResult done = get(runner.resumeAsync(paused.getRunId(), Map.of("approve", "no")));
        assertEquals(List.of("draft q", "answer no"), done.getState().get(s.log));

        // the run has ended: resuming it again fails the future
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(runner.resumeAsync(paused.getRunId())));
        assertInstanceOf(IllegalStateException.class, e.getCause());
    }

    @Test
    void aResumedRunThatFailsCompletesWithGraphRunException() throws Exception {
        TrellisRunner runner = Trellis.runner(approval(), settings(store));
        RunResult paused = get(runner.invokeAsync(Map.of("question", "q")));

        ExecutionException e = assertThrows(ExecutionException.class, () -> get(runner.resumeAsync(paused.getRunId(), "boom")));
        GraphRunException failure = assertInstanceOf(GraphRunException.class, e.getCause());
        assertInstanceOf(IllegalStateException.class, failure.getCause());
        assertEquals("boom", failure.getCause().getMessage());
        assertEquals(Status.FAILED, failure.getResult().getStatus());
    }

    @Test
    void cancellingAResumeInterruptsTheNode() throws Exception {
        TrellisRunner runner = Trellis.runner(approval(), settings(store));
        RunResult paused = get(runner.invokeAsync(Map.of("question", "q")));

        CompletableFuture<RunResult> resumed = runner.resumeAsync(paused.getRunId(), "wait");
        Fixtures.await(started, "the node to start");
        assertTrue(resumed.cancel(true));
        Fixtures.await(interrupted, "the node to be interrupted");
        assertTrue(resumed.isCancelled());
    }

    @Test
    void aDrainedRunResumesWithoutRunningCompletedNodesAgain() throws Exception {
        RunControl control = new RunControl();
        JavaRunOptions settings = JavaRunOptions.builder().checkpointing(new Checkpointing(store)).control(control).build();
        TrellisRunner runner = Trellis.runner(twoSteps(), settings);

        CompletableFuture<RunResult> run = runner.invokeAsync(Map.of("question", "q"));
        Fixtures.await(started, "first to start");
        control.drain();
        release.countDown();
        RunResult drained = get(run);
        assertEquals(Status.INTERRUPTED, drained.getStatus());
        assertEquals(1, drained.getState().get(s.count));
        assertEquals(List.of(), drained.getState().get(s.log));

        // a new process: the same store, no draining control
        TrellisRunner restarted = runner.withOptions(settings.newBuilder().control(null).build());
        RunResult done = get(restarted.resumeAsync(drained.getRunId()));
        assertEquals(Status.COMPLETED, done.getStatus());
        assertEquals(List.of("second q 1"), done.getState().get(s.log));
        assertEquals(1, firstRuns.get());
    }

    @Test
    void checkpointsAndStateAtAndFork() throws Exception {
        release.countDown();
        TrellisRunner runner = Trellis.runner(twoSteps(), settings(store));
        RunResult done = get(runner.invokeAsync(Map.of("question", "q")));
        assertEquals(List.of("second q 1"), done.getState().get(s.log));

        List<CheckpointInfo> history = get(runner.checkpointsAsync(done.getRunId()));
        assertTrue(history.size() >= 2, history.toString());
        CheckpointInfo first = history.get(0);
        CheckpointInfo last = history.get(history.size() - 1);
        assertEquals("COMPLETED", last.getStatus());
        assertNull(first.getForkedFrom());
        assertEquals(0, get(runner.stateAtAsync(done.getRunId(), first.getSequence())).get(s.count));
        assertEquals(1, get(runner.stateAtAsync(done.getRunId(), last.getSequence())).get(s.count));
        assertEquals(List.of(), get(runner.checkpointsAsync("no-such-run")));

        RunResult fork = get(runner.forkAsync(done.getRunId(), first.getSequence(), state -> state.with(s.question, "edited")));
        assertEquals(Status.COMPLETED, fork.getStatus());
        assertTrue(!fork.getRunId().equals(done.getRunId()));
        assertEquals(List.of("second edited 1"), fork.getState().get(s.log));
        assertEquals(
            new CheckpointRef(done.getRunId(), first.getSequence()),
            get(runner.checkpointsAsync(fork.getRunId())).get(0).getForkedFrom());

        RunResult again = get(runner.forkAsync(done.getRunId(), first.getSequence()));
        assertEquals(List.of("second q 1"), again.getState().get(s.log));
        // the original run is untouched
        assertEquals(history.size(), get(runner.checkpointsAsync(done.getRunId())).size());
    }

    @Test
    void aSnapshotRoundTripsThroughJson() throws Exception {
        RunControl control = new RunControl();
        TrellisRunner runner = Trellis.runner(
            twoSteps(), JavaRunOptions.builder().checkpointing(new Checkpointing(store)).control(control).build());
        CompletableFuture<RunResult> run = runner.invokeAsync(Map.of("question", "q"));
        Fixtures.await(started, "first to start");
        control.drain();
        release.countDown();
        RunResult drained = get(run);

        RunSnapshot snapshot = get(runner.takeSnapshotAsync(drained.getRunId()));
        String json = snapshot.toJson();
        RunSnapshot loaded = Trellis.runner(twoSteps()).loadSnapshot(json);
        assertEquals(drained.getRunId(), loaded.getRunId());
        assertEquals(1, loaded.getState().get(s.count));

        // resuming a snapshot needs no store
        RunResult done = get(Trellis.runner(twoSteps()).resumeAsync(loaded));
        assertEquals(Status.COMPLETED, done.getStatus());
        assertEquals(List.of("second q 1"), done.getState().get(s.log));
        assertEquals(1, firstRuns.get());
    }

    @Test
    void persistenceCallsWithoutAStoreSayHowToSetOne() {
        TrellisRunner runner = Trellis.runner(approval());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> runner.resumeAsync("r1", "yes"));
        assertTrue(e.getMessage().contains("JavaRunOptions.builder().checkpointing("), e.getMessage());
        assertThrows(IllegalStateException.class, () -> runner.resumeAsync("r1"));
        assertThrows(IllegalStateException.class, () -> runner.forkAsync("r1", 1));
        assertThrows(IllegalStateException.class, () -> runner.checkpointsAsync("r1"));
        assertThrows(IllegalStateException.class, () -> runner.stateAtAsync("r1", 1));
        assertThrows(IllegalStateException.class, () -> runner.takeSnapshotAsync("r1"));
    }

    @Test
    void resumesInANewProcessFromSqlite(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("runs.db");
        String runId;
        try (SqliteCheckpointStore sqlite = new SqliteCheckpointStore(db)) {
            RunResult paused = get(Trellis.runner(approval(), settings(sqlite)).invokeAsync(Map.of("question", "q")));
            assertEquals(Status.INTERRUPTED, paused.getStatus());
            runId = paused.getRunId();
        }
        try (SqliteCheckpointStore sqlite = new SqliteCheckpointStore(db)) {
            TrellisRunner runner = Trellis.runner(approval(), settings(sqlite));
            RunResult done = get(runner.resumeAsync(runId, "yes"));
            assertEquals(Status.COMPLETED, done.getStatus());
            assertEquals(List.of("draft q", "answer yes"), done.getState().get(s.log));
            List<CheckpointInfo> history = get(runner.checkpointsAsync(runId));
            assertEquals("COMPLETED", history.get(history.size() - 1).getStatus());
            assertNotNull(get(runner.takeSnapshotAsync(runId)).toJson());
        }
    }
}
