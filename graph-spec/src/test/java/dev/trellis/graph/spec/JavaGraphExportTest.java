package dev.trellis.graph.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import dev.trellis.runtime.RunResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A graph built with the Java builder exports to a spec, loads back with the same registry, and runs and draws alike. */
class JavaGraphExportTest {
    static final StateSchema DRAFT = new StateSchema("java-draft");
    static final StateKey<String> TOPIC = Keys.required(DRAFT, "topic", String.class);
    static final StateKey<Integer> DRAFTS = Keys.of(DRAFT, "drafts", Integer.class, 0);
    static final StateKey<String> TEXT = Keys.of(DRAFT, "text", String.class, "");
    static final StateKey<Boolean> PUBLISHED = Keys.of(DRAFT, "published", Boolean.class, false);

    static Graph javaGraph() {
        return JavaGraph.builder("java-draft", DRAFT)
            .node("write", node -> {
                int n = node.get(DRAFTS) + 1;
                node.set(DRAFTS, n);
                node.set(TEXT, "Draft " + n + " about " + node.get(TOPIC));
            })
            .blockingNode("review", node -> node.set(TEXT, node.get(TEXT) + " (reviewed)"))
            .node("publish", node -> node.set(PUBLISHED, true))
            .start("write")
            .edge("write", "review", state -> state.get(DRAFTS) > 0)
            .route("review", List.of("write", "publish"), state -> state.get(DRAFTS) < 3 ? "write" : "publish")
            .edge("publish", Graph.END)
            .build();
    }

    @Test
    void aJavaBuilderGraphExportsLoadsBackRunsAndDrawsLikeItself() throws Exception {
        Graph built = javaGraph();
        HandlerRegistry registry = HandlerRegistry.builder().handlersOf(built).build();
        assertEquals("java-draft.write", registry.nameOf(built.node("write").getBody()));

        String yaml = GraphSpec.toYaml(built, registry);
        assertTrue(yaml.contains("handler: java-draft.review"), yaml);
        assertTrue(yaml.contains("route: java-draft.review.route"), yaml);
        assertTrue(yaml.contains("when: java-draft.write.to.review"), yaml);

        Graph loaded = GraphSpec.load(yaml, registry);
        assertEquals(yaml, GraphSpec.toYaml(loaded, registry));
        assertEquals(built.toMermaid(), loaded.toMermaid());

        RunResult fromBuilder = Trellis.runner(built).invoke(Map.of("topic", "the sky"));
        RunResult fromSpec = Trellis.runner(loaded).invoke(Map.of("topic", "the sky"));
        assertEquals("Draft 3 about the sky (reviewed)", fromSpec.getState().get(TEXT));
        assertEquals(fromBuilder.getState(), fromSpec.getState());
        assertEquals(fromBuilder.node("write").getExecutions(), fromSpec.node("write").getExecutions());
    }

    @Test
    void handlersAlreadyRegisteredKeepTheirNames() {
        Graph built = javaGraph();
        HandlerRegistry registry = HandlerRegistry.builder()
            .node("writer", built.node("write").getBody())
            .handlersOf(built)
            .build();
        String yaml = GraphSpec.toYaml(built, registry);
        assertTrue(yaml.contains("handler: writer"), yaml);
        assertTrue(yaml.contains("handler: java-draft.publish"), yaml);
    }
}
