package dev.trellis.temporal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.runtime.Status;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Java side of the runner: register a Java-built graph, start it, wait for its result, refuse a duplicate id. */
class JavaTemporalRunnerTest {
    private final StateSchema schema = new StateSchema("java-temporal");
    private final StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
    private TestWorkflowEnvironment env;
    private TemporalRunner runner;

    private Graph graph() {
        return JavaGraph.builder("java-temporal", schema)
            .node("a", ctx -> ctx.set(log, List.of("a")))
            .node("b", ctx -> ctx.set(log, List.of("b after " + ctx.get(log))))
            .start("a")
            .edge("a", "b")
            .build();
    }

    @BeforeEach
    void setUp() {
        env = TestWorkflowEnvironment.newInstance();
        Worker worker = env.newWorker("java-queue");
        TemporalWorkers.register(worker, List.of(graph()));
        env.start();
        runner = new TemporalRunner(env.getWorkflowClient(), "java-queue");
    }

    @AfterEach
    void tearDown() {
        env.close();
    }

    @Test
    void runsAJavaGraphAndRefusesADuplicateRunId() {
        Graph graph = graph();
        TemporalRun run = runner.start(graph, schema.initialState(), "java-run");
        TemporalRunResult result = run.resultAsync().join();
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(List.of("a", "b after [a]"), result.getState().get(log));
        assertEquals(1, result.node("b").getExecutions());
        IllegalStateException error =
            assertThrows(IllegalStateException.class, () -> runner.start(graph, schema.initialState(), "java-run"));
        assertTrue(error.getMessage().contains("attach"), error.getMessage());
    }
}
