package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.GraphValidationException;
import dev.trellis.graph.NodeError;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.TaskError;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The errors of a graph built from Java suggest the Java calls that fix them, never the Kotlin DSL's syntax. */
class BuildMessagesJavaTest {
    @Test
    void buildErrorsNameTheJavaCallsNotTheKotlinDsl() {
        JavaGraph.Builder builder = JavaGraph.builder("java-names");
        StateKey<NodeError> error = Keys.nodeError(builder.getSchema(), "error");
        StateKey<List<String>> items = Keys.appending(builder.getSchema(), "items", String.class);
        StateKey<List<TaskError>> errors = Keys.taskErrors(builder.getSchema(), "errors");
        GraphValidationException e = assertThrows(GraphValidationException.class, () -> builder
            .node("a", ctx -> {})
            .map("each", items, (ctx, item) -> {}, MapOptions.DEFAULT.withErrors(errors))
            .start("a")
            .edge("a", "ghost")
            .edge("a", "each")
            .onFailure("a", "a", error)
            .intercept("phantom", chain -> chain.proceed())
            .build());
        String problems = String.join("\n", e.getProblems());
        for (String fix : List.of(
                "declare it with builder.node(\"ghost\", ctx -> …)",
                "declare it with builder.node(\"phantom\", ctx -> …)",
                "NodeOptions.retry(Retry.fixed(...))",
                "MapOptions.withTaskFailure(TaskFailure.COLLECT)")) {
            assertTrue(problems.contains(fix), fix + " in:\n" + problems);
        }
        for (String kotlin : List.of("{ }", "retry = ", "onTaskFailure = ")) {
            assertFalse(problems.contains(kotlin), kotlin + " in:\n" + problems);
        }
    }
}
