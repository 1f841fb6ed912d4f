package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.Status;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A Java node's write is checked at the write: raw types and nulls cannot put a wrong value in the state. */
class WriteCheckTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    @Test
    @SuppressWarnings({"rawtypes", "unchecked"})
    void aRawTypedWriteOfTheWrongTypeFailsItsNodeNamingKeyAndNode() {
        StateKey rawCount = s.count;
        Graph g = JavaGraph.builder("raw-write", s.schema)
            .node("count", ctx -> ctx.set(rawCount, "seven"))
            .start("count")
            .build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(g).invoke(Map.of("question", "q")));
        assertEquals(Status.FAILED, e.getResult().getStatus());
        String message = Failures.cause(e).getMessage();
        assertTrue(message.contains("Node 'count' wrote a value of type java.lang.String to state key 'count'"), message);
        assertEquals(0, e.getResult().getState().get(s.count));
    }

    @Test
    void aNullWrittenToANonNullKeyFailsItsNode() {
        Graph g = JavaGraph.builder("null-write", s.schema)
            .node("blank", ctx -> ctx.set(s.question, null))
            .start("blank")
            .build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(g).invoke(Map.of("question", "q")));
        assertTrue(Failures.cause(e).getMessage().contains("Node 'blank' wrote null to state key 'question'"));
        assertEquals("q", e.getResult().getState().get(s.question));
    }
}
