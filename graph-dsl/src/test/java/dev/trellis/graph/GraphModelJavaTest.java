package dev.trellis.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import kotlin.jvm.internal.IntCompanionObject;
import kotlin.jvm.internal.StringCompanionObject;
import kotlinx.serialization.KSerializer;
import kotlinx.serialization.builtins.BuiltinSerializersKt;
import org.junit.jupiter.api.Test;

/** The graph model as plain Java sees it: schemas, keys, state, reducers, retries and built graphs. */
class GraphModelJavaTest {
    private static final KSerializer<Integer> INT = BuiltinSerializersKt.serializer(IntCompanionObject.INSTANCE);
    private static final KSerializer<String> STRING = BuiltinSerializersKt.serializer(StringCompanionObject.INSTANCE);
    private static final KSerializer<List<String>> STRINGS = BuiltinSerializersKt.ListSerializer(STRING);

    private final StateSchema schema = new StateSchema("ingest");
    private final StateKey<String> url = schema.key("url", STRING, String.class, false);
    private final StateKey<Integer> count = schema.key("count", INT, Integer.class, false, 0, Reducer.sum());
    private final StateKey<List<String>> notes = schema.key("notes", STRINGS, List.class, false, List.of(), Reducer.append());
    private final StateKey<String> owner = schema.key("owner", STRING, String.class, true, null);

    @Test
    void declaresKeysWithExplicitSerializers() {
        assertEquals("ingest", schema.getName());
        assertEquals(List.of(url, count, notes, owner), schema.getKeys());
        assertEquals("kotlin.Int", count.getTypeName());
        assertEquals("kotlin.String?", owner.getTypeName());
        assertFalse(url.getHasDefault());
        assertSame(count, schema.keyOrNull("count"));
    }

    @Test
    void buildsAndReadsStateFromAMap() {
        State state = schema.stateOf(Map.of("url", "https://example.org", "count", 2));
        assertEquals("https://example.org", state.get(url));
        assertEquals(2, (int) state.get(count));
        assertEquals(List.of(), state.get(notes));
        assertNull(state.get(owner));
        assertTrue(state.contains(owner));
        assertEquals(0L, state.versionOf(count));

        State next = state.with(count, 3).with(notes, List.of("fetched"));
        assertEquals(3, (int) next.get(count));
        assertEquals(List.of("fetched"), next.get(notes));
        assertEquals(2, (int) state.get(count));
    }

    @Test
    void reportsMissingUnknownAndMistypedValues() {
        State empty = schema.initialState();
        assertNull(empty.getOrNull(url));
        assertFalse(empty.contains(url));
        NoSuchElementException missing = assertThrows(NoSuchElementException.class, () -> empty.get(url));
        assertTrue(missing.getMessage().contains("State key 'url' of schema 'ingest' has no value"));

        IllegalArgumentException unknown =
            assertThrows(IllegalArgumentException.class, () -> schema.stateOf(Map.of("ur1", "x")));
        assertTrue(unknown.getMessage().contains("Known keys: url, count, notes, owner."));

        IllegalArgumentException mistyped =
            assertThrows(IllegalArgumentException.class, () -> schema.stateOf(Map.of("count", "two")));
        assertTrue(mistyped.getMessage().contains("holds values of type kotlin.Int, but was given java.lang.String"));
    }

    @Test
    void usesBuiltInAndLambdaReducers() {
        assertEquals(List.of("a", "b", "c"), Reducer.<String>append().reduce(List.of("a"), List.of("b", "c")));
        assertEquals(Map.of("k", 2, "j", 3), Reducer.<String, Integer>merge().reduce(Map.of("k", 1), Map.of("k", 2, "j", 3)));
        assertEquals(5, (int) Reducer.sum().reduce(2, 3));
        assertEquals(5L, (long) Reducer.sumLong().reduce(2L, 3L));
        assertEquals(2.5, Reducer.sumDouble().reduce(1.0, 1.5));
        assertEquals("new", Reducer.<String>replace().reduce("old", "new"));
        Reducer<Integer> max = Math::max;
        StateKey<Integer> highest = schema.key("highest", INT, Integer.class, false, 0, max);
        assertSame(max, highest.getReducer());
        assertEquals(7, (int) max.reduce(7, 4));
    }

    @Test
    void errorsAreValuesWithStaticSerializers() {
        NodeError error = new NodeError("search", "java.io.IOException", "down", 3);
        assertEquals(new NodeError("search", "java.io.IOException", "down", 3), error);
        String json = kotlinx.serialization.json.Json.Default.encodeToString(NodeError.serializer(), error);
        assertEquals("{\"node\":\"search\",\"type\":\"java.io.IOException\",\"message\":\"down\",\"attempts\":3}", json);
        TaskError task = new TaskError(1, "E", null);
        assertEquals(task, kotlinx.serialization.json.Json.Default.decodeFromString(TaskError.serializer(),
            kotlinx.serialization.json.Json.Default.encodeToString(TaskError.serializer(), task)));
    }

    @Test
    void buildsRetryPoliciesWithJavaDurations() {
        Retry retry = Retry.exponential(4, java.time.Duration.ofMillis(100), 3.0, java.time.Duration.ofSeconds(2));
        assertEquals(java.time.Duration.ofMillis(100), retry.getInitialDelay());
        assertEquals(java.time.Duration.ofSeconds(2), retry.getMaxDelay());
        assertEquals(java.time.Duration.ofSeconds(1), retry.withMaxDelay(java.time.Duration.ofSeconds(1)).getMaxDelay());
        assertEquals(Retry.Backoff.FIXED, Retry.fixed(2, java.time.Duration.ZERO).getBackoff());
        assertEquals(Retry.Backoff.LINEAR,
            Retry.linear(2, java.time.Duration.ofMillis(1), java.time.Duration.ofMillis(5)).getBackoff());
        assertEquals(java.time.Duration.ofSeconds(30), Retry.exponential(3, java.time.Duration.ofMillis(1)).getMaxDelay());
    }

    @Test
    void readsAndRefinesRetryPolicies() {
        Retry search = JavaFixtures.research().node("search").getRetry();
        assertEquals(3, search.getMaxAttempts());
        assertEquals(Retry.Backoff.EXPONENTIAL, search.getBackoff());
        assertEquals(2.0, search.getMultiplier());

        Retry onlyIo = search.retryOn(e -> e instanceof IOException).withJitter(0.2);
        assertTrue(onlyIo.shouldRetry(new IOException("down"), 1));
        assertFalse(onlyIo.shouldRetry(new IllegalStateException("bug"), 1));
        assertFalse(onlyIo.shouldRetry(new IOException("down"), 3));
        assertEquals(0.2, onlyIo.getJitter());
        assertFalse(Retry.NONE.shouldRetry(new IOException(), 1));
        assertThrows(IllegalArgumentException.class, () -> Retry.NONE.withJitter(2.0));
    }

    @Test
    void namesTheEndOfAPath() {
        assertEquals("__end__", Graph.END);
        assertEquals(Graph.END, NodeRef.END.getId());
        assertSame(NodeRef.END, NodeRef.of(Graph.END));
        assertEquals(NodeRef.of("write"), NodeRef.of("write"));
        assertTrue(Graph.RESERVED_IDS.contains("START"));
        assertEquals(GraphConfig.DEFAULT_MAX_NODE_EXECUTIONS, GraphConfig.DEFAULT.getMaxNodeExecutions());
    }

    @Test
    void inspectsAGraphWrittenInKotlin() {
        Graph graph = JavaFixtures.research();
        assertEquals(List.of("plan"), graph.getEntryPoints());
        assertEquals(4, graph.getNodes().size());
        Edge.Route route = assertInstanceOf(Edge.Route.class, graph.edgesFrom("review").get(0));
        assertEquals(List.of("write", Graph.END), route.getTargets());
        assertEquals(List.of(route), graph.getBackEdges());
        State accepted = Research.INSTANCE.stateOf(Map.of("verdict", Verdict.Accept));
        assertSame(NodeRef.END, route.getSelector().invoke(accepted));
        assertTrue(graph.toMermaid().contains("__start__ --> n0"));
    }

    @Test
    void builtGraphsCannotBeChangedThroughTheirCollections() {
        Graph graph = JavaFixtures.research();
        assertThrows(UnsupportedOperationException.class, () -> graph.getNodes().clear());
        assertThrows(UnsupportedOperationException.class, () -> graph.getEdges().remove(0));
        assertThrows(UnsupportedOperationException.class, () -> graph.getEntryPoints().add("write"));
        assertThrows(UnsupportedOperationException.class, () -> graph.getBackEdges().clear());
        assertThrows(UnsupportedOperationException.class, () -> graph.edgesFrom("review").get(0).getTargets().clear());
        assertThrows(UnsupportedOperationException.class, () -> Graph.RESERVED_IDS.clear());
    }

    @Test
    void reportsValidationProblemsToJava() {
        GraphBuilder builder = new GraphBuilder("java", schema);
        builder.start(NodeRef.of("fetch"));
        GraphValidationException e = assertThrows(GraphValidationException.class, builder::build);
        assertEquals("java", e.getGraphId());
        assertEquals(1, e.getProblems().size());
        assertTrue(e.getProblems().get(0).contains("Entry point 'fetch' is not a node"));
    }
}
