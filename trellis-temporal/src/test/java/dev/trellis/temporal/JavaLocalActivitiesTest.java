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
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The Java side of local activities, heartbeats and the refused policies. */
class JavaLocalActivitiesTest {
    private final StateSchema schema = new StateSchema("java-local");
    private final StateKey<List<String>> log = Keys.appending(schema, "log", String.class);

    private Graph graph() {
        return JavaGraph.builder("java-local", schema)
            .node("classify", ctx -> ctx.set(log, List.of("classify")))
            .node("write", ctx -> ctx.set(log, List.of("write after " + ctx.get(log))))
            .start("classify")
            .edge("classify", "write")
            .build();
    }

    @Test
    void aShortNodeRunsAsALocalActivityAndTheOtherHeartbeats() {
        try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
            Worker worker = env.newWorker("java-local");
            TemporalOptions options = new TemporalOptions()
                .withLocalNodes(Set.of("classify"))
                .withHeartbeatTimeout(Duration.ofSeconds(30));
            TemporalWorkers.register(worker, List.of(graph()), options);
            env.start();
            TemporalRunner runner = new TemporalRunner(env.getWorkflowClient(), "java-local");
            TemporalRunResult result = runner.start(graph(), schema.initialState(), "java-local-run").awaitBlocking();

            assertEquals(Status.COMPLETED, result.getStatus());
            assertEquals(List.of("classify", "write after [classify]"), result.getState().get(log));
            List<HistoryEvent> events = env.getWorkflowClient().fetchHistory("java-local-run").getEvents();
            long local = events.stream()
                .filter(e -> e.getEventType() == EventType.EVENT_TYPE_MARKER_RECORDED)
                .filter(e -> e.getMarkerRecordedEventAttributes().getMarkerName().equals("LocalActivity"))
                .count();
            assertEquals(1, local);
            HistoryEvent scheduled = events.stream()
                .filter(e -> e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
                .findFirst()
                .orElseThrow();
            assertEquals(30, scheduled.getActivityTaskScheduledEventAttributes().getHeartbeatTimeout().getSeconds());
        }
    }

    @Test
    void aCompensationIsRefusedAtRegistration() {
        Graph graph = JavaGraph.builder("java-trip", schema)
            .node("book", ctx -> ctx.set(log, List.of("booked")))
            .start("book")
            .compensate("book", state -> { })
            .build();
        try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
            IllegalArgumentException error = assertThrows(
                IllegalArgumentException.class,
                () -> TemporalWorkers.register(env.newWorker("java-trip"), List.of(graph)));
            assertTrue(error.getMessage().contains("Node 'book' of graph 'java-trip' declares a compensation"),
                error.getMessage());
        }
    }
}
