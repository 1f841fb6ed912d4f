package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.checkpoint.RunInfo;
import dev.trellis.graph.Graph;
import dev.trellis.runtime.CheckpointInfo;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The Java publisher's cancel loses no work ({@code docs/semantics.md} §6): a run whose subscriber cancels after k
 * events, for every k, resumes to the state of the uninterrupted run, with every branch run.
 */
class PublisherCancelResumeTest {
    private final Fixtures.Schema s = new Fixtures.Schema();
    private final InMemoryCheckpointStore store = new InMemoryCheckpointStore(100_000);

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(Fixtures.WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** entry -> b0..b5 (in parallel on the run's threads) -> join */
    private Graph fanOut() {
        JavaGraph.Builder b = JavaGraph.builder("fan-out", s.schema)
            .node("entry", ctx -> ctx.set(s.log, List.of("entry")))
            .node("join", ctx -> ctx.set(s.log, List.of("join")))
            .start("entry");
        for (int i = 0; i < 6; i++) {
            String id = "b" + i;
            b.asyncNode(id, ctx -> CompletableFuture.runAsync(() -> ctx.set(s.log, List.of(id))))
                .edge("entry", id)
                .edge(id, "join");
        }
        return b.build();
    }

    /** Subscribes, takes [k] events one by one, then cancels. */
    private static void cutAfter(Flow.Publisher<RunEvent> events, int k) throws InterruptedException {
        CountDownLatch cut = new CountDownLatch(1);
        events.subscribe(new Flow.Subscriber<>() {
            private Flow.Subscription subscription;
            private int seen;

            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                this.subscription = subscription;
                subscription.request(1);
            }

            @Override
            public void onNext(RunEvent item) {
                if (++seen == k) {
                    subscription.cancel();
                    cut.countDown();
                } else {
                    subscription.request(1);
                }
            }

            @Override
            public void onError(Throwable throwable) {
                cut.countDown();
            }

            @Override
            public void onComplete() {
                cut.countDown();
            }
        });
        Fixtures.await(cut, "the cut");
    }

    /** Waits until the cancelled run released its lease: it has ended and saves nothing more. */
    private void awaitReleased(TrellisRunner runner, String runId) throws Exception {
        long deadline = System.nanoTime() + Fixtures.WAIT.toNanos();
        while (true) {
            RunInfo info = get(runner.runsAsync()).stream().filter(r -> r.getRunId().equals(runId)).findFirst().orElse(null);
            if (info == null || info.getOwner() == null) return;
            if (System.nanoTime() > deadline) throw new AssertionError("run " + runId + " kept its lease: " + info);
            Thread.sleep(1);
        }
    }

    @Test
    void everyCutResumesToTheUninterruptedState() throws Exception {
        Graph graph = fanOut();
        RunResult expected = Trellis.runner(graph).invoke(Map.of("question", "q"));
        List<String> want = new ArrayList<>(expected.getState().get(s.log));
        want.sort(null);
        int events = 0;
        Fixtures.Recorder all = new Fixtures.Recorder();
        Trellis.runner(graph, JavaRunOptions.builder().checkpointing(new Checkpointing(store)).build())
            .events(Map.of("question", "q")).subscribe(org.reactivestreams.FlowAdapters.toFlowSubscriber(all));
        all.request(Long.MAX_VALUE);
        all.awaitDone();
        events = all.events.size();
        for (int round = 0; round < 5; round++) {
            for (int k = 1; k < events; k++) {
                String runId = "cut-" + round + "-" + k;
                TrellisRunner runner = Trellis.runner(
                    graph, JavaRunOptions.builder().runId(runId).checkpointing(new Checkpointing(store)).build());
                cutAfter(runner.events(Map.of("question", "q")), k);
                awaitReleased(runner, runId);
                List<CheckpointInfo> saved = get(runner.checkpointsAsync(runId));
                TrellisRunner resuming = Trellis.runner(graph, JavaRunOptions.builder().checkpointing(new Checkpointing(store)).build());
                List<String> got;
                if (saved.isEmpty()) {
                    got = new ArrayList<>(get(runner.invokeAsync(Map.of("question", "q"))).getState().get(s.log));
                } else if (saved.get(saved.size() - 1).getStatus().equals("COMPLETED")) {
                    got = new ArrayList<>(get(resuming.stateAtAsync(runId, saved.get(saved.size() - 1).getSequence())).get(s.log));
                } else {
                    RunResult resumed = get(resuming.resumeAsync(runId));
                    assertEquals(Status.COMPLETED, resumed.getStatus(), runId);
                    got = new ArrayList<>(resumed.getState().get(s.log));
                }
                got.sort(null);
                assertEquals(want, got, runId + " cut after " + k + " of " + events + " events");
            }
        }
    }
}
