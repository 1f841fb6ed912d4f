package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.InMemoryNodeCache;
import dev.trellis.checkpoint.sqlite.SqliteNodeCache;
import dev.trellis.graph.CachePolicy;
import dev.trellis.graph.Graph;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.testing.TestClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The node result cache from Java: {@code NodeOptions.cache}, {@code JavaRunOptions.Builder.cache} (docs/semantics.md §13.5). */
class NodeCacheJavaTest {
    private final Fixtures.Schema s = new Fixtures.Schema();
    private final AtomicInteger bodies = new AtomicInteger();

    private Graph graph() {
        return JavaGraph.builder("search", s.schema)
            .blockingNode("search", ctx -> {
                bodies.incrementAndGet();
                ctx.set(s.count, ctx.get(s.question).length());
                ctx.set(s.log, List.of("searched " + ctx.get(s.question)));
            }, NodeOptions.cache(CachePolicy.of(state -> state.get(s.question), Duration.ofMinutes(10))))
            .start("search")
            .build();
    }

    @Test
    void aHitSkipsTheActionAndExpiresByTheRunsClock() throws Exception {
        TestClock clock = new TestClock();
        InMemoryNodeCache cache = new InMemoryNodeCache();
        TrellisRunner runner = Trellis.runner(graph(), JavaRunOptions.builder().cache(cache).clock(clock).build());

        assertEquals(5, runner.invoke(Map.of("question", "hello")).getState().get(s.count));
        List<RunEvent> events = Collections.synchronizedList(new ArrayList<>());
        RunResult second = runner.start(Map.of("question", "hello"), events::add).result().get(10, TimeUnit.SECONDS);
        assertEquals(5, second.getState().get(s.count));
        assertEquals(List.of("searched hello"), second.getState().get(s.log));
        assertEquals(1, bodies.get());
        RunEvent.NodeCacheHit hit = events.stream()
            .filter(e -> e instanceof RunEvent.NodeCacheHit)
            .map(e -> (RunEvent.NodeCacheHit) e)
            .findFirst()
            .orElseThrow();
        assertEquals("search", hit.getNodeId());
        assertEquals("hello", hit.getKey());
        assertEquals(1, cache.getHits());
        assertEquals(1, cache.getStores());

        clock.advance(Duration.ofMinutes(10));
        runner.invoke(Map.of("question", "hello"));
        assertEquals(2, bodies.get());
    }

    @Test
    void entriesInSqliteOutliveTheCacheObject() throws Exception {
        Path file = Files.createTempDirectory("trellis-java-cache").resolve("trellis.db");
        try (SqliteNodeCache first = new SqliteNodeCache(file)) {
            Trellis.runner(graph(), JavaRunOptions.builder().cache(first).build()).invoke(Map.of("question", "abc"));
        }
        try (SqliteNodeCache reopened = new SqliteNodeCache(file)) {
            RunResult result = Trellis.runner(graph(), JavaRunOptions.builder().cache(reopened).build())
                .invoke(Map.of("question", "abc"));
            assertEquals(3, result.getState().get(s.count));
        }
        assertEquals(1, bodies.get());
    }

    @Test
    void aRunWithoutACacheStoreIsRefusedNamingTheFix() {
        TrellisRunner runner = Trellis.runner(graph());
        IllegalArgumentException e =
            assertThrows(IllegalArgumentException.class, () -> runner.invoke(Map.of("question", "q")));
        assertTrue(e.getMessage().contains("JavaRunOptions.builder().cache(...)"), e.getMessage());
    }
}
