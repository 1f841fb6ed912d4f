package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.Retry;
import dev.trellis.graph.GraphReport;
import dev.trellis.graph.GraphValidationException;
import dev.trellis.graph.SliceViolationException;
import dev.trellis.graph.StateKey;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.Status;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Node slices from Java (docs/semantics.md §12): NodeOptions.reads/writes, violations, validate() and build(). */
class SlicesJavaTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    @Test
    void aNodeReadsAndWritesInsideItsSlice() throws InterruptedException {
        Graph graph = JavaGraph.builder("sliced", s.schema)
            .node("count", ctx -> ctx.update(s.count, c -> c + ctx.get(s.question).length()),
                NodeOptions.reads(s.count, s.question).withWrites(s.count))
            .start("count")
            .build();
        assertEquals(Set.<StateKey<?>>of(s.count, s.question), graph.node("count").getSlice().getReads());
        assertEquals(3, Trellis.runner(graph).invoke(Map.of("question", "abc")).getState().get(s.count));
    }

    @Test
    void aReadOrWriteOutsideTheSliceFailsTheNodeNamingNodeKeyAndSlice() throws InterruptedException {
        for (boolean blocking : new boolean[] {false, true}) {
            NodeAction leak = ctx -> ctx.set(s.log, List.of(ctx.getState().get(s.question)));
            NodeOptions options = NodeOptions.reads(s.count).withWrites(s.log);
            JavaGraph.Builder builder = JavaGraph.builder("leak", s.schema);
            builder = blocking ? builder.blockingNode("leak", leak, options) : builder.node("leak", leak, options);
            Graph graph = builder.start("leak").build();
            GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(graph).invoke(Map.of("question", "q")));
            SliceViolationException violation = assertInstanceOf(SliceViolationException.class, e.getCause());
            assertEquals("leak", violation.getNodeId());
            assertEquals(s.question, violation.getKey());
            assertEquals(SliceViolationException.Access.READ, violation.getAccess());
            assertTrue(violation.getMessage().contains("not in its declared reads [count]"), violation.getMessage());
            assertTrue(violation.getMessage().contains("NodeOptions.withReads"), violation.getMessage());
            assertEquals(Status.FAILED, e.getResult().node("leak").getStatus());
        }
        Graph writer = JavaGraph.builder("write", s.schema)
            .node("w", ctx -> ctx.set(s.count, 1), NodeOptions.writes(s.log).withRetry(Retry.fixed(3, java.time.Duration.ofMillis(1))))
            .start("w")
            .build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(writer).invoke(Map.of("question", "q")));
        assertEquals(SliceViolationException.Access.WRITE, ((SliceViolationException) e.getCause()).getAccess());
        assertEquals(1, e.getResult().node("w").getAttempts()); // never retried
    }

    @Test
    void parallelWritersAreRefusedByBuildOrReportedByValidate() {
        GraphValidationException refused = assertThrows(GraphValidationException.class, () ->
            JavaGraph.builder("fan", s.schema)
                .node("a", ctx -> ctx.set(s.count, 1), NodeOptions.writes(s.count))
                .node("b", ctx -> ctx.set(s.count, 2), NodeOptions.writes(s.count))
                .start("a", "b")
                .build());
        assertTrue(refused.getProblems().get(0).contains("Nodes 'a' and 'b' can run in parallel"), refused.getMessage());

        Graph conditional = JavaGraph.builder("cond", s.schema)
            .node("f", ctx -> { })
            .node("a", ctx -> ctx.set(s.count, 1), NodeOptions.writes(s.count))
            .node("b", ctx -> ctx.set(s.count, 2), NodeOptions.writes(s.count))
            .start("f")
            .edge("f", "a", state -> state.get(s.count) == 0)
            .edge("f", "b", state -> state.get(s.count) > 0)
            .build();
        GraphReport report = conditional.validate();
        assertEquals(1, report.getParallelWrites().size());
        assertEquals(s.count, report.getParallelWrites().get(0).getKey());
        assertEquals(List.of("f"), report.getNodesWithoutWrites());
        assertTrue(conditional.toMermaid(true).contains("a<br/>reads: *<br/>writes: count"));
    }
}
