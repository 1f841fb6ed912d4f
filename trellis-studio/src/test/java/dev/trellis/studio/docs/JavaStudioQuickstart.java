package dev.trellis.studio.docs;

import dev.trellis.checkpoint.CheckpointStore;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.studio.TrellisStudio;

public final class JavaStudioQuickstart {
    static final StateSchema SCHEMA = new StateSchema("greeting-java");
    static final StateKey<String> TEXT = Keys.of(SCHEMA, "text", String.class, "");

    public static String run() {
        Graph greet = JavaGraph.builder("greet-java", SCHEMA)
            .node("hello", node -> node.set(TEXT, "Hello from Java!"))
            .start("hello")
            .build();
        CheckpointStore store = new InMemoryCheckpointStore();
        // The builder: the graphs it may run, the port, and (to listen beyond this machine) host and token.
        try (TrellisStudio studio = TrellisStudio.builder(store).graph(greet).port(0).start()) {
            System.out.println("Trellis Studio at " + studio.getUrl());
            return studio.getUrl();
        }
    }
}
