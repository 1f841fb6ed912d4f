package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.runtime.CheckpointInfo;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.FlowAdapters;

/** {@code TrellisRunner.retryAsync} and {@code retryEvents}: a failed run is retried from its last checkpoint. */
class RetryJavaTest {
    private final Fixtures.Schema s = new Fixtures.Schema();
    private final AtomicBoolean broken = new AtomicBoolean(true);
    private final AtomicInteger fetches = new AtomicInteger();
    private final AtomicInteger stores = new AtomicInteger();

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(Fixtures.WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** fetch -> store (fails while broken) */
    private Graph pipeline() {
        return JavaGraph.builder("pipeline", s.schema)
            .node("fetch", ctx -> {
                fetches.incrementAndGet();
                ctx.set(s.log, List.of("fetched " + ctx.get(s.question)));
            })
            .node("store", ctx -> {
                stores.incrementAndGet();
                if (broken.get()) throw new IllegalStateException("database down");
                ctx.set(s.log, List.of("stored"));
            })
            .start("fetch")
            .edge("fetch", "store")
            .build();
    }

    private void retries(dev.trellis.checkpoint.CheckpointStore store) throws Exception {
        TrellisRunner runner = Trellis.runner(
            pipeline(), JavaRunOptions.builder().runId("job-1").checkpointing(new Checkpointing(store)).build());
        ExecutionException failed = assertThrows(ExecutionException.class, () -> get(runner.invokeAsync(Map.of("question", "q"))));
        assertInstanceOf(GraphRunException.class, failed.getCause());

        broken.set(false);
        TrellisRunner retrying = Trellis.runner(pipeline(), JavaRunOptions.builder().checkpointing(new Checkpointing(store)).build());
        RunResult result = get(retrying.retryAsync("job-1"));
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(List.of("fetched q", "stored"), result.getState().get(s.log));
        assertEquals(1, fetches.get(), "the completed node kept its completion");
        assertEquals(2, stores.get(), "the failed node ran again");
        List<String> labels = get(retrying.checkpointsAsync("job-1")).stream().map(CheckpointInfo::getStatus).toList();
        assertTrue(labels.contains("FAILED") && labels.contains("RETRY"), labels.toString());
        assertEquals("COMPLETED", labels.get(labels.size() - 1));

        ExecutionException again = assertThrows(ExecutionException.class, () -> get(retrying.retryAsync("job-1")));
        assertInstanceOf(IllegalStateException.class, again.getCause());
        assertTrue(again.getCause().getMessage().contains("runner.forkAsync(\"job-1\", sequence)"), again.getCause().getMessage());
    }

    @Test
    void retryAsyncInMemory() throws Exception {
        retries(new InMemoryCheckpointStore());
    }

    @Test
    void retryAsyncOnSqlite(@TempDir Path dir) throws Exception {
        try (SqliteCheckpointStore store = new SqliteCheckpointStore(dir.resolve("runs.db"))) {
            retries(store);
        }
    }

    @Test
    void retryEventsStreamsTheRetriedRun() throws Exception {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        TrellisRunner runner = Trellis.runner(
            pipeline(), JavaRunOptions.builder().runId("job-2").checkpointing(new Checkpointing(store)).build());
        assertThrows(ExecutionException.class, () -> get(runner.invokeAsync(Map.of("question", "q"))));
        broken.set(false);
        TrellisRunner retrying = Trellis.runner(pipeline(), JavaRunOptions.builder().checkpointing(new Checkpointing(store)).build());
        Fixtures.Recorder recorder = new Fixtures.Recorder();
        retrying.retryEvents("job-2").subscribe(FlowAdapters.toFlowSubscriber(recorder));
        recorder.request(Long.MAX_VALUE);
        recorder.awaitDone();
        RunEvent last = recorder.events.get(recorder.events.size() - 1);
        assertInstanceOf(RunEvent.RunCompleted.class, last);
        assertTrue(recorder.events.stream().noneMatch(e -> e instanceof RunEvent.NodeStarted started && started.getNodeId().equals("fetch")));
    }

    @Test
    void retryAsyncNeedsACheckpointStore() {
        assertThrows(IllegalStateException.class, () -> Trellis.runner(pipeline()).retryAsync("job"));
        assertThrows(IllegalStateException.class, () -> Trellis.runner(pipeline()).retryEvents("job"));
    }
}
