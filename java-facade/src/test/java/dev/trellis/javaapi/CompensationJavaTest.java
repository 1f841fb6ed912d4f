package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.runtime.CompensationResult;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Java compensations: {@code JavaCompensation}, declared with {@code JavaGraph.Builder.compensate} (docs/semantics.md §13.6). */
class CompensationJavaTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    @Test
    void aFailedRunUndoesItsCompletedNodesInReverseOrderWithTheStateAfterEach() {
        List<String> undone = Collections.synchronizedList(new ArrayList<>());
        IllegalStateException refundDown = new IllegalStateException("refund service down");
        Graph graph = JavaGraph.builder("trip", s.schema)
            .node("book", ctx -> ctx.set(s.count, 1))
            .blockingNode("charge", ctx -> ctx.set(s.count, ctx.get(s.count) + 1))
            .node("invoice", ctx -> {
                throw new IllegalArgumentException("invoice service down");
            })
            .compensate("book", state -> undone.add("book@" + state.get(s.count)))
            .compensate("charge", state -> {
                undone.add("charge@" + state.get(s.count));
                throw refundDown;
            })
            .edge("book", "charge")
            .edge("charge", "invoice")
            .start("book")
            .build();
        GraphRunException failed =
            assertThrows(GraphRunException.class, () -> Trellis.runner(graph).invoke(Map.of("question", "q")));
        RunResult result = failed.getResult();
        assertEquals(Status.FAILED, result.getStatus());
        assertEquals("invoice service down", result.getError().getMessage());
        assertEquals(List.of("charge@2", "book@1"), undone);
        List<CompensationResult> compensations = result.getCompensations();
        assertEquals(List.of("charge", "book"), compensations.stream().map(CompensationResult::getNodeId).toList());
        assertEquals(Status.FAILED, compensations.get(0).getStatus());
        assertSame(refundDown, compensations.get(0).getError());
        assertEquals(Status.COMPLETED, compensations.get(1).getStatus());
        assertSame(refundDown, result.getError().getSuppressed()[0]);
    }

    @Test
    void aCancelledRunUndoesOnlyWhenTheSettingsAskForIt() {
        JavaRunOptions settings = JavaRunOptions.builder().compensateOnCancel(true).build();
        assertTrue(settings.getCompensateOnCancel());
        assertEquals(false, JavaRunOptions.DEFAULT.getCompensateOnCancel());
    }
}
