package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * State keys declared from Java must be checkpointable: what Jackson shows without a value is checked when the key
 * is declared; a value that still cannot be read back fails the node that wrote it when the run saves checkpoints.
 */
class KeyTypesTest {
    interface Shape {}

    record Circle(double radius) implements Shape {}

    abstract static class Vehicle {
        public int wheels;
    }

    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME)
    @JsonSubTypes({@JsonSubTypes.Type(value = Square.class, name = "square")})
    interface Tagged {}

    record Square(double side) implements Tagged {}

    /** Jackson writes it (a getter), but has no way to create one (no default constructor, no creator). */
    static final class Sealed {
        private final int code;

        Sealed(int code, String unused) {
            this.code = code;
        }

        public int getCode() {
            return code;
        }
    }

    /** A record Jackson can create, holding an interface it cannot: only a value shows the problem. */
    record Drawing(String title, Shape shape) {}

    @Test
    void keysOfAnInterfaceOrAbstractClassFailAtDeclaration() {
        StateSchema schema = new StateSchema("shapes");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Keys.of(schema, "shape", Shape.class, null));
        assertTrue(e.getMessage().contains("State key 'shape' of schema 'shapes'"), e.getMessage());
        assertTrue(e.getMessage().contains(Shape.class.getName()), e.getMessage());
        assertTrue(e.getMessage().contains("@JsonTypeInfo"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Keys.required(schema, "vehicle", Vehicle.class));
        assertThrows(IllegalArgumentException.class, () -> Keys.nullable(schema, "vehicle2", Vehicle.class));
        assertThrows(IllegalArgumentException.class, () -> Keys.appending(schema, "shapes", Shape.class));
        assertEquals(List.of(), schema.getKeys());
    }

    @Test
    void keysOfAClassJacksonCannotCreateFailAtDeclaration() {
        StateSchema schema = new StateSchema("codes");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Keys.required(schema, "sealed", Sealed.class));
        assertTrue(e.getMessage().contains("State key 'sealed' of schema 'codes'"), e.getMessage());
        assertTrue(e.getMessage().contains(Sealed.class.getName()), e.getMessage());
        assertTrue(e.getMessage().contains("@JsonCreator"), e.getMessage());
    }

    @Test
    void keysJacksonCanReadAreAccepted() {
        StateSchema schema = new StateSchema("fine");
        Keys.of(schema, "circle", Circle.class, new Circle(1));
        Keys.of(schema, "tagged", Tagged.class, null);
        Keys.of(schema, "list", List.class, List.of());
        Keys.of(schema, "map", Map.class, Map.of());
        Keys.of(schema, "number", Number.class, 1);
        Keys.appending(schema, "circles", Circle.class);
        Keys.merging(schema, "counts", String.class, Integer.class);
        Keys.of(schema, "drawing", Drawing.class, null);
        assertEquals(8, schema.getKeys().size());
    }

    @Test
    void aValueThatDoesNotReadBackFailsItsNodeWhenTheRunSavesCheckpoints() throws Exception {
        StateSchema schema = new StateSchema("drawings");
        StateKey<Drawing> drawing = Keys.of(schema, "drawing", Drawing.class, null);
        Graph graph = JavaGraph.builder("drawings", schema)
            .node("draw", ctx -> ctx.set(drawing, new Drawing("sun", new Circle(3))))
            .start("draw")
            .build();
        JavaRunOptions checkpointed = JavaRunOptions.builder().checkpointing(new Checkpointing(new InMemoryCheckpointStore())).build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(graph, checkpointed).invoke(Map.of()));
        assertEquals(Status.FAILED, e.getResult().node("draw").getStatus());
        IllegalStateException cause = assertInstanceOf(IllegalStateException.class, e.getCause());
        assertTrue(cause.getMessage().contains("state key 'drawing'"), cause.getMessage());
        assertTrue(cause.getMessage().contains("cannot be read back"), cause.getMessage());

        RunResult unchecked = Trellis.runner(graph).invoke(Map.of());
        assertEquals(new Drawing("sun", new Circle(3)), unchecked.getState().get(drawing));
    }
}
