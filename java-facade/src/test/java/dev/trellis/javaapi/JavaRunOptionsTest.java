package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class JavaRunOptionsTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    @Test
    void settingsReachTheRun() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "run-loop"));
        try {
            AtomicReference<String> thread = new AtomicReference<>();
            Graph graph = JavaGraph.builder("settings", s.schema)
                .asyncNode("where", ctx -> {
                    thread.set(Thread.currentThread().getName());
                    return java.util.concurrent.CompletableFuture.completedFuture(null);
                })
                .node("second", ctx -> {})
                .start("where").edge("where", "second")
                .build();
            Clock clock = Clock.fixed(Instant.parse("2030-01-01T00:00:00Z"), ZoneOffset.UTC);
            JavaRunOptions settings = JavaRunOptions.builder()
                .runId("fixed").executor(pool).clock(clock).random(new Random(1)).executionHistoryLimit(1)
                .build();
            TrellisRunner runner = Trellis.runner(graph).withOptions(settings);
            assertSame(settings, runner.getOptions());
            assertSame(graph, runner.getGraph());
            List<RunEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
            RunResult result = runner.start(Map.of("question", "q"), events::add).result().get();
            assertEquals("fixed", result.getRunId());
            assertTrue(thread.get().startsWith("run-loop"), "async node actions run on the run's executor: " + thread.get());
            assertEquals(Instant.parse("2030-01-01T00:00:00Z"), events.get(0).getTimestamp());
            assertEquals(1, result.getExecutions().size());
            assertEquals(1, result.getDroppedExecutions());
            assertTrue(runner.toString().contains("settings"));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void newBuilderKeepsTheSettingsAndDefaultsAreSensible() {
        JavaRunOptions settings = JavaRunOptions.builder().runId("a").executionHistoryLimit(3).build();
        JavaRunOptions copy = settings.newBuilder().build();
        assertEquals(Optional.of("a"), copy.getRunId());
        assertEquals(3, copy.getExecutionHistoryLimit());
        assertEquals(Optional.empty(), JavaRunOptions.DEFAULT.getRunId());
        assertEquals(Optional.empty(), JavaRunOptions.DEFAULT.getExecutor());
        assertEquals(Optional.empty(), JavaRunOptions.DEFAULT.getRandom());
        assertEquals(Optional.empty(), JavaRunOptions.DEFAULT.getCheckpointing());
        assertEquals(Optional.empty(), JavaRunOptions.DEFAULT.getControl());
        assertEquals(10_000, JavaRunOptions.DEFAULT.getExecutionHistoryLimit());
        assertThrows(IllegalArgumentException.class, () -> JavaRunOptions.builder().runId(" ").build());
        assertThrows(IllegalArgumentException.class, () -> JavaRunOptions.builder().executionHistoryLimit(-1).build());
    }
}
