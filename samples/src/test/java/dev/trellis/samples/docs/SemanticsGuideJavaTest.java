package dev.trellis.samples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.NodeError;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Java examples of {@code docs/semantics.md} (§13.2 routing rules, §13.3 error routes), run and checked. */
class SemanticsGuideJavaTest {
    private final StateSchema schema = new StateSchema("doc");
    private final StateKey<Integer> drafts = Keys.of(schema, "drafts", Integer.class, 0);
    private final StateKey<Boolean> approved = Keys.of(schema, "approved", Boolean.class, false);
    private final StateKey<Integer> approveAt = Keys.of(schema, "approveAt", Integer.class, 2);
    private final StateKey<String> outcome = Keys.of(schema, "outcome", String.class, "");
    private final StateKey<NodeError> searchError = Keys.nodeError(schema, "searchError");

    @Test
    void firstMatchTakesTheFirstConditionThatHoldsElseTheDefaultTarget() throws Exception {
        JavaGraph.Builder builder = JavaGraph.builder("review", schema)
            .node("write", ctx -> ctx.update(drafts, d -> d + 1))
            .node("review", ctx -> ctx.set(approved, ctx.get(drafts) >= ctx.get(approveAt)))
            .node("publish", ctx -> ctx.set(outcome, "published draft " + ctx.get(drafts)))
            .node("giveUp", ctx -> ctx.set(outcome, "gave up after " + ctx.get(drafts)))
            .start("write")
            .edge("write", "review");
        builder.firstMatch("review", routes -> routes
            .on("publish", s -> s.get(approved))
            .on("write", s -> s.get(drafts) < 3)
            .otherwise("giveUp"));          // or otherwise(Graph.END); or otherwiseFail()
        Graph graph = builder.build();
        assertEquals("published draft 2", Trellis.runner(graph).invoke(Map.of("approveAt", 2)).getState().get(outcome));
        assertEquals("gave up after 3", Trellis.runner(graph).invoke(Map.of("approveAt", 9)).getState().get(outcome));
    }

    @Test
    void anErrorRouteTakesANodesFailureAndADefaultRouteEveryOtherNodes() throws Exception {
        JavaGraph.Builder builder = JavaGraph.builder("research", schema)
            .node("search", ctx -> { throw new IllegalStateException("search API is down"); })
            .node("fallback", ctx -> ctx.set(outcome, "cached (" + ctx.get(searchError).getMessage() + ")"))
            .node("summarize", ctx -> { throw new IllegalStateException("no summary"); })
            .node("giveUp", ctx -> ctx.set(outcome, ctx.get(outcome) + ", gave up"))
            .start("search")
            .edge("search", "summarize")
            .edge("fallback", "summarize");
        builder.onFailure("search", "fallback", searchError)   // a StateKey<NodeError>
            .defaultOnFailure("giveUp");                       // every node without its own route
        RunResult result = Trellis.runner(builder.build()).invoke(Map.of());
        assertEquals(Status.COMPLETED, result.getStatus());
        assertTrue(result.getState().get(outcome).contains("search API is down"), result.getState().get(outcome));
        assertTrue(result.getState().get(outcome).endsWith(", gave up"), result.getState().get(outcome));
    }
}
