package dev.trellis.graph.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.NodeRef;
import dev.trellis.graph.Reducer;
import dev.trellis.graph.State;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import kotlinx.serialization.builtins.BuiltinSerializersKt;
import org.junit.jupiter.api.Test;

/** The graph spec from Java: a registry of Java lambdas, loading, export and the problems of a bad spec. */
class GraphSpecJavaTest {
    // --8<-- [start:java-registry]
    static final String SPEC = String.join("\n",
        "format: 1",
        "graphs:",
        "  count:",
        "    state:",
        "      keys:",
        "        count: {type: int, default: 0, reducer: sum}",
        "    start: [step]",
        "    nodes:",
        "      step: {handler: step}",
        "    edges:",
        "      - {from: step, route: again, targets: [step, END]}");

    static HandlerRegistry registry() {
        return HandlerRegistry.builder()
            .nodeAction("step", scope -> {
                StateKey<Integer> count = counter(scope.getState());
                scope.set(count, 1);
            })
            .selector("again", state -> state.get(counter(state)) < 3 ? NodeRef.of("step") : NodeRef.END)
            .build();
    }

    @SuppressWarnings("unchecked")
    static StateKey<Integer> counter(State state) {
        return (StateKey<Integer>) state.getSchema().keyOrNull("count");
    }
    // --8<-- [end:java-registry]

    @Test
    void loadsExportsAndReloadsASpecWithJavaHandlers() {
        HandlerRegistry registry = registry();
        Graph graph = GraphSpec.load(SPEC, registry);
        assertEquals("count", graph.getId());
        assertEquals(1, graph.getNodes().size());
        String yaml = GraphSpec.toYaml(graph, registry);
        assertTrue(yaml.contains("route: again"), yaml);
        Graph again = GraphSpec.load(GraphSpec.toJson(graph, registry), registry);
        assertEquals(yaml, GraphSpec.toYaml(again, registry));
        assertTrue(GraphSpec.jsonSchema().contains("\"$schema\""));
    }

    @Test
    void aBadSpecReportsEveryProblemWithItsPlace() throws Exception {
        Path file = Files.createTempFile("bad", ".yaml");
        try {
            Files.writeString(file, SPEC.replace("handler: step", "handler: stpe").replace("route: again", "route: agian"));
            GraphSpecException e = assertThrows(GraphSpecException.class, () -> GraphSpec.load(file, registry()));
            assertEquals(2, e.getProblems().size());
            SpecProblem first = e.getProblems().get(0);
            assertEquals(9, first.getLine());
            assertEquals("/graphs/count/nodes/step/handler", first.getPointer());
            assertTrue(first.getMessage().contains("did you mean 'step'?"), first.getMessage());
        } finally {
            Files.delete(file);
        }
    }

    @Test
    void aRegisteredSchemaAndCodecAreUsedByName() {
        StateSchema schema = new StateSchema("tally");
        StateKey<Integer> total = schema.key(
            "total", BuiltinSerializersKt.serializer(kotlin.jvm.internal.IntCompanionObject.INSTANCE), Integer.class,
            false, 0, Reducer.sum());
        HandlerRegistry registry = HandlerRegistry.builder()
            .schema(schema)
            .nodeAction("add", scope -> scope.set(total, 2))
            .build();
        String spec = "format: 1\ngraphs:\n  t:\n    state: {schema: tally, keys: {total: {type: int, default: 0, reducer: sum}}}\n"
            + "    start: [add]\n    nodes: {add: {handler: add}}\n";
        Graph graph = GraphSpec.load(spec, registry);
        assertTrue(graph.getSchema() == schema);
        assertEquals("add", registry.nameOf(registry.node("add")));
    }
}
