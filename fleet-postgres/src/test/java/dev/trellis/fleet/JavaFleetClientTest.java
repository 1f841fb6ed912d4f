package dev.trellis.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.trellis.testing.TestPostgres;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JavaFleetClientTest {
    private final String schema = TestPostgres.INSTANCE.newSchema();
    private final HikariDataSource pool = TestGraphs.pool(8);
    private final FleetWorker worker =
            new FleetWorker(pool, TestGraphs.options(schema, "java-worker")).register(TestGraphs.greeting(1), 1).start();
    private final JavaFleetClient client = new JavaFleetClient(pool, schema);

    @AfterEach
    void cleanUp() {
        worker.shutdown(Duration.ofSeconds(10));
        client.close();
        pool.close();
        TestPostgres.INSTANCE.dropSchema(schema);
    }

    @Test
    void submitAwaitAndAnswerFromJava() {
        String runId = client.submit(new Submission("greeting", 1, "{\"name\": \"Java\", \"ask\": true}", "java-1")).join();
        assertEquals("java-1", runId);

        FleetResult paused = client.await(runId).join();
        assertEquals(FleetStatus.PAUSED, paused.getStatus());
        assertEquals("approve", paused.getInterrupts().get(0).getNodeId());

        client.answer(runId, "approve", "ok").join();
        FleetResult done = client.await(runId).join();
        assertEquals(FleetStatus.COMPLETED, done.getStatus());
        assertEquals("Hello, Java", done.state(TestGraphs.greeting(1)).get(TestGraphs.Greeting.INSTANCE.getGreeting()));
        assertEquals("ok", done.state(TestGraphs.greeting(1)).get(TestGraphs.Greeting.INSTANCE.getApproved()));
        assertEquals("COMPLETED", client.history(runId).join().get(client.history(runId).join().size() - 1).getStatus());
        assertEquals(1L, client.counts().join().get(0).getCompleted());

        FleetRunInfo row = client.info(runId).join();
        assertEquals(FleetStatus.COMPLETED, row.getStatus());
        assertEquals(2, row.getAttempt());
        assertEquals(0, row.getLostClaims());
        assertTrue(client.lostClaims().join().isEmpty());
        assertNull(client.info("java-none").join());
    }

    @Test
    void aBadSubmissionFailsTheFutureAndWritesNothing() {
        CompletionException unknown = assertThrows(
                CompletionException.class, () -> client.submit(new Submission("greeting", 3, "{}", "java-bad")).join());
        assertInstanceOf(IllegalArgumentException.class, unknown.getCause());
        assertTrue(unknown.getCause().getMessage().contains("registered versions: [1]"), unknown.getCause().getMessage());

        CompletionException missing = assertThrows(CompletionException.class, () -> client.result("java-bad").join());
        assertInstanceOf(java.util.NoSuchElementException.class, missing.getCause());
    }

    @Test
    void aWorkerWithoutGroupCommitRunsTheSameGraphs() {
        FleetWorkerOptions options = new FleetWorkerOptions(
                schema, "java-alone", 4, Duration.ofSeconds(5), null, Duration.ofMillis(200), true, null, null, null, false);
        assertEquals(false, options.getGroupCommit());
        worker.shutdown(Duration.ofSeconds(10));
        FleetWorker alone = new FleetWorker(pool, options).register(TestGraphs.greeting(1), 1).start();
        try {
            String runId = client.submit(new Submission("greeting", 1, "{\"name\": \"Alone\"}", "java-alone-1")).join();
            FleetResult done = client.await(runId).join();
            assertEquals(FleetStatus.COMPLETED, done.getStatus());
            assertEquals("Hello, Alone", done.state(TestGraphs.greeting(1)).get(TestGraphs.Greeting.INSTANCE.getGreeting()));
            assertEquals(4, client.history(runId).join().size());
        } finally {
            alone.shutdown(Duration.ofSeconds(10));
        }
    }
}
