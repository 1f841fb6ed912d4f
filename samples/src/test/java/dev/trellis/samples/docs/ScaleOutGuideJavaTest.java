package dev.trellis.samples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.fleet.FleetResult;
import dev.trellis.fleet.FleetStatus;
import dev.trellis.fleet.FleetWorker;
import dev.trellis.fleet.FleetWorkerOptions;
import dev.trellis.fleet.JavaFleetClient;
import dev.trellis.fleet.Submission;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.testing.TestPostgres;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The Java example of {@code docs/scale-out.md}, as the guide shows it, run on PostgreSQL and checked. */
class ScaleOutGuideJavaTest {
    private final StateSchema schemaOfState = new StateSchema("research");
    private final StateKey<String> question = Keys.required(schemaOfState, "question", String.class);
    private final StateKey<String> answer = Keys.of(schemaOfState, "answer", String.class, "");

    /** research, version 2: draft writes an answer, publish asks before it is published. */
    private final Graph research = JavaGraph.builder("research", schemaOfState)
        .node("draft", ctx -> ctx.set(answer, "Because of Rayleigh scattering: " + ctx.get(question)))
        .blockingNode("publish", ctx -> ctx.interrupt("Publish it?"))
        .start("draft")
        .edge("draft", "publish")
        .build();

    @Test
    void aWorkerRunsASubmittedRunWhichPausesAndCompletesOnceAnswered() throws Exception {
        DataSource dataSource = TestPostgres.INSTANCE.getDataSource();
        String schema = TestPostgres.INSTANCE.newSchema();
        try {
            FleetWorkerOptions options = new FleetWorkerOptions(schema);
            FleetWorker worker = new FleetWorker(dataSource, options).register(research, 2).start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> worker.shutdown(Duration.ofSeconds(30))));

            JavaFleetClient client = new JavaFleetClient(dataSource, schema);
            String runId = client.submit(new Submission("research", 2, "{\"question\": \"Why is the sky blue?\"}")).join();
            FleetResult result = client.await(runId).join();                     // COMPLETED, FAILED or PAUSED
            if (result.getStatus() == FleetStatus.PAUSED) client.answer(runId, "publish", "yes").join();
            assertEquals(FleetStatus.PAUSED, result.getStatus());
            FleetResult done = client.await(runId).join();
            assertEquals(FleetStatus.COMPLETED, done.getStatus());
            assertTrue(done.state(research).get(answer).contains("Rayleigh"));
            assertTrue(worker.shutdown(Duration.ofSeconds(30)));
            client.close();
        } finally {
            TestPostgres.INSTANCE.dropSchema(schema);
        }
    }
}
