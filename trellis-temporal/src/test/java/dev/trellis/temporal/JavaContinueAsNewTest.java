package dev.trellis.temporal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.runtime.Status;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** From Java: a run continues as new at the history length TemporalOptions sets, and ends as one run. */
class JavaContinueAsNewTest {
    private final StateSchema schema = new StateSchema("java-segments");
    private final StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
    private TestWorkflowEnvironment env;
    private TemporalRunner runner;

    private Graph chain() {
        JavaGraph.Builder builder = JavaGraph.builder("java-segments", schema);
        for (int i = 1; i <= 8; i++) {
            String name = "step" + i;
            builder.node(name, ctx -> ctx.set(log, List.of(name)));
            if (i > 1) builder.edge("step" + (i - 1), name);
        }
        return builder.start("step1").build();
    }

    @BeforeEach
    void setUp() {
        env = TestWorkflowEnvironment.newInstance();
        Worker worker = env.newWorker("java-segments");
        TemporalWorkers.register(worker, List.of(chain()), new TemporalOptions().withContinueAsNewAfterEvents(10));
        env.start();
        runner = new TemporalRunner(env.getWorkflowClient(), "java-segments");
    }

    @AfterEach
    void tearDown() {
        env.close();
    }

    @Test
    void aChainSpansSeveralWorkflowExecutionsAndEndsAsOneRun() {
        TemporalRunResult result = runner.start(chain(), schema.initialState(), "java-segments-1").awaitBlocking();
        assertEquals(Status.COMPLETED, result.getStatus());
        List<String> expected = new ArrayList<>();
        for (int i = 1; i <= 8; i++) expected.add("step" + i);
        assertEquals(expected, result.getState().get(log));
        assertEquals(1, result.node("step8").getExecutions());

        int executions = 1;
        WorkflowExecutionHistory history = env.getWorkflowClient().fetchHistory("java-segments-1");
        String previous = history.getEvents().get(0).getWorkflowExecutionStartedEventAttributes().getContinuedExecutionRunId();
        while (!previous.isEmpty()) {
            executions++;
            history = env.getWorkflowClient().fetchHistory("java-segments-1", previous);
            previous = history.getEvents().get(0).getWorkflowExecutionStartedEventAttributes().getContinuedExecutionRunId();
        }
        assertTrue(executions >= 3, "the run took " + executions + " workflow executions");
    }
}
