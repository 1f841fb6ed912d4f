package dev.trellis.graph.spec.docs;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.graph.spec.GraphSpec;
import dev.trellis.graph.spec.HandlerRegistry;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import java.nio.file.Path;
import java.util.Map;

public class JavaDraft {
    static final StateSchema DRAFT = new StateSchema("draft");
    static final StateKey<String> TOPIC = Keys.required(DRAFT, "topic", String.class);
    static final StateKey<Integer> DRAFTS = Keys.of(DRAFT, "drafts", Integer.class, 0);
    static final StateKey<String> TEXT = Keys.of(DRAFT, "text", String.class, "");

    // The code a spec may name: nothing else runs.
    static final HandlerRegistry REGISTRY = HandlerRegistry.builder()
        .schema(DRAFT)
        .nodeAction("write", node -> {
            int n = node.get(DRAFTS) + 1;
            node.set(DRAFTS, n);
            node.set(TEXT, "Draft " + n + " about " + node.get(TOPIC));
        })
        .build();

    public static void main(String[] args) throws Exception {
        Graph graph = GraphSpec.load(Path.of(args[0]), REGISTRY); // every problem at once, with line and column
        var result = Trellis.runner(graph).invoke(Map.of("topic", "the sky"));
        System.out.println(result.getState().get(TEXT));
        System.out.println(GraphSpec.toYaml(graph, REGISTRY).lines().findFirst().orElseThrow()); // back to data
    }
}
