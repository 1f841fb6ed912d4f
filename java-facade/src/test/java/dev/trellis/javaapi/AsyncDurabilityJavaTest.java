package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.trellis.checkpoint.CheckpointRecord;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code Checkpointing.Durability.ASYNC} from Java ({@code docs/persistence.md}, "Durability: waiting for each step,
 * or not"): set with {@code withDurability}, kept by {@code withLeaseWait}, and a run that returns has every one of
 * its checkpoints stored, in order.
 */
class AsyncDurabilityJavaTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    private Graph chain() {
        return JavaGraph.builder("async-java", s.schema)
            .node("a", ctx -> ctx.set(s.log, List.of("a")))
            .node("b", ctx -> ctx.set(s.log, List.of("b")))
            .node("c", ctx -> ctx.set(s.log, List.of("c")))
            .start("a")
            .edge("a", "b")
            .edge("b", "c")
            .build();
    }

    @Test
    void aRunWithAsyncDurabilityReturnsWithEveryCheckpointStored() throws Exception {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        Checkpointing checkpointing = new Checkpointing(store).withDurability(Checkpointing.Durability.ASYNC);
        assertEquals(Checkpointing.Durability.ASYNC, checkpointing.getDurability());
        assertEquals(Checkpointing.Durability.ASYNC, checkpointing.withLeaseWait(java.time.Duration.ofSeconds(1)).getDurability());
        assertEquals(16, Checkpointing.Durability.MAX_PENDING);

        TrellisRunner runner = Trellis.runner(chain(), JavaRunOptions.builder().checkpointing(checkpointing).build());
        RunResult result = runner.invokeAsync(Map.of("question", "q")).get(60, TimeUnit.SECONDS);
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(List.of("a", "b", "c"), result.getState().get(s.log));

        List<CheckpointRecord> history = AsyncCheckpointStore.of(store).history(result.getRunId()).toCompletableFuture().join();
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), history.stream().map(CheckpointRecord::getSequence).toList());
        assertEquals("COMPLETED", history.get(history.size() - 1).getStatus());
    }
}
