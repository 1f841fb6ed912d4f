package dev.trellis.bench;

import dev.trellis.graph.Graph;
import dev.trellis.javaapi.JavaGraph;
import java.util.List;

/** The Java-facade workloads: the same graphs as {@link TrellisWorkloads}, built with {@link JavaGraph} in Java. */
final class JavaWorkloads {
    private JavaWorkloads() {}

    /** One {@code node} incrementing the counter. */
    static Graph oneNode() {
        return JavaGraph.builder("java-one-node", BenchState.INSTANCE)
            .node("only", ctx -> ctx.update(BenchState.INSTANCE.getN(), n -> n + 1))
            .start("only")
            .build();
    }

    /** A chain of {@code length} {@code node}s, each incrementing the counter. */
    static Graph chain(int length) {
        JavaGraph.Builder builder = JavaGraph.builder("java-chain-" + length, BenchState.INSTANCE);
        for (int i = 0; i < length; i++) {
            builder.node("c" + i, ctx -> ctx.update(BenchState.INSTANCE.getN(), n -> n + 1));
            if (i > 0) builder.edge("c" + (i - 1), "c" + i);
        }
        return builder.start("c0").build();
    }

    /**
     * entry -> {@code width} parallel {@code blockingNode}s, each sleeping {@code millis} and appending its id to the
     * log -> join: blocking nodes must all sleep at the same time, whatever the number of cores.
     */
    static Graph sleepers(int width, long millis) {
        JavaGraph.Builder builder = JavaGraph.builder("java-sleepers-" + width, BenchState.INSTANCE)
            .node("entry", ctx -> {})
            .node("join", ctx -> {})
            .start("entry");
        for (int i = 0; i < width; i++) {
            String id = "s" + i;
            builder.blockingNode(id, ctx -> {
                Thread.sleep(millis);
                ctx.set(BenchState.INSTANCE.getLog(), List.of(id));
            });
            builder.edge("entry", id).edge(id, "join");
        }
        return builder.maxNodeExecutions(width + 2).build();
    }

    /** A map node of one trivial {@code map} task (inline) per item, each adding its item to the total. */
    static Graph map() {
        return JavaGraph.builder("java-map", MapState.INSTANCE)
            .map("add", MapState.INSTANCE.getItems(), (ctx, item) -> ctx.set(MapState.INSTANCE.getTotal(), item))
            .start("add")
            .build();
    }
}
