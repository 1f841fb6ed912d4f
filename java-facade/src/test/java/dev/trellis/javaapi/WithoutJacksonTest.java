package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.Reducer;
import dev.trellis.graph.State;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a Java user without {@code trellis-jackson} gets. The module's pom runs this class alone, on the test
 * classpath minus Jackson and the Jackson codecs; the tag keeps it out of the ordinary test run, where Jackson is
 * present.
 */
@Tag("without-jackson")
class WithoutJacksonTest {
    @Test
    void jacksonIsNotOnTheClasspath() {
        assertThrows(ClassNotFoundException.class, () -> Class.forName("tools.jackson.databind.ObjectMapper"));
        assertThrows(ClassNotFoundException.class, () -> Class.forName("dev.trellis.jackson.JacksonSerializer"));
    }

    @Test
    void keysOfBuiltInTypesAreCheckpointedAndRestored() throws Exception {
        StateSchema schema = new StateSchema("plain");
        StateKey<String> text = Keys.required(schema, "text", String.class);
        StateKey<Integer> count = Keys.of(schema, "count", Integer.class, 0);
        StateKey<Long> big = Keys.of(schema, "big", Long.class, 0L);
        StateKey<Boolean> flag = Keys.of(schema, "flag", Boolean.class, false);
        StateKey<Double> ratio = Keys.of(schema, "ratio", Double.class, 0.0);
        StateKey<Double> odd = Keys.nullable(schema, "odd", Double.class);
        StateKey<String> answer = Keys.nullable(schema, "answer", String.class);
        StateKey<Integer> total = Keys.reducing(schema, "total", Integer.class, 0, Reducer.sum());
        StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
        StateKey<Map<String, Long>> sizes = Keys.merging(schema, "sizes", String.class, Long.class);
        StateKey<Map<Integer, Boolean>> seen = Keys.merging(schema, "seen", Integer.class, Boolean.class);

        Graph graph = JavaGraph.builder("plain", schema)
            .node("write", ctx -> {
                ctx.set(count, 3);
                ctx.set(big, Long.MAX_VALUE);
                ctx.set(flag, true);
                ctx.set(ratio, 0.1 + 0.2);
                ctx.set(odd, Double.NaN);
                ctx.set(total, 4);
                ctx.set(log, Arrays.asList("héllo 🌍 \"quoted\"", null));
                ctx.set(sizes, Map.of("a", 1L << 40));
                ctx.set(seen, Map.of(7, true));
            })
            .node("ask", ctx -> ctx.set(answer, ctx.interrupt("answer?")))
            .start("write")
            .edge("write", "ask")
            .build();
        TrellisRunner runner = Trellis.runner(graph,
            JavaRunOptions.builder().checkpointing(new Checkpointing(new InMemoryCheckpointStore())).build());

        RunResult paused = runner.invoke(Map.of("text", "in"));
        assertEquals(Status.INTERRUPTED, paused.getStatus());
        // The resumed run starts from the checkpoint: every value below was written to JSON and read back.
        RunResult done = runner.resumeAsync(paused.getRunId(), "yes").get(Fixtures.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(Status.COMPLETED, done.getStatus());
        State state = done.getState();
        assertEquals("in", state.get(text));
        assertEquals(3, state.get(count));
        assertEquals(Long.MAX_VALUE, state.get(big));
        assertEquals(true, state.get(flag));
        assertEquals(0.1 + 0.2, state.get(ratio));
        assertTrue(state.get(odd).isNaN());
        assertEquals("yes", state.get(answer));
        assertEquals(4, state.get(total));
        assertEquals(Arrays.asList("héllo 🌍 \"quoted\"", null), state.get(log));
        assertEquals(Map.of("a", 1L << 40), state.get(sizes));
        assertEquals(Map.of(7, true), state.get(seen));
        State restored = runner.stateAtAsync(paused.getRunId(), 2).get(Fixtures.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(Long.MAX_VALUE, restored.get(big));
        assertNull(restored.get(answer));
    }

    @Test
    void aKeyThatNeedsJacksonNamesTheDependencyToAdd() {
        StateSchema schema = new StateSchema("needs-jackson");
        IllegalStateException one = assertThrows(IllegalStateException.class, () -> Keys.of(schema, "when", Instant.class, null));
        assertTrue(one.getMessage().contains("State key 'when' holds values of type java.time.Instant"), one.getMessage());
        assertTrue(one.getMessage().contains("Add the dependency dev.trellis:trellis-jackson"), one.getMessage());
        IllegalStateException list = assertThrows(IllegalStateException.class, () -> Keys.appending(schema, "times", Instant.class));
        assertTrue(list.getMessage().contains("java.util.List<java.time.Instant>"), list.getMessage());
        IllegalStateException map = assertThrows(IllegalStateException.class,
            () -> Keys.merging(schema, "byName", String.class, Instant.class));
        assertTrue(map.getMessage().contains("java.util.Map<java.lang.String,java.time.Instant>"), map.getMessage());
        assertTrue(schema.getKeys().isEmpty(), "a refused key is not declared");
    }
}
