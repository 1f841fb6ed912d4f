package dev.trellis.temporal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.runtime.Budget;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.Status;
import dev.trellis.testing.TestPostgres;
import io.temporal.client.WorkflowClient;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** The Java snippets of docs/temporal.md, as they are there, run. */
class JavaTemporalDocsTest {
    private final StateSchema schema = new StateSchema("java-docs");
    private final StateKey<String> question = Keys.required(schema, "question", String.class);
    private final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");

    private final List<RunEvent> received = new CopyOnWriteArrayList<>();
    private final Subscriber<RunEvent> subscriber = new Subscriber<>() {
        @Override public void onSubscribe(Subscription s) { s.request(Long.MAX_VALUE); }
        @Override public void onNext(RunEvent event) { received.add(event); }
        @Override public void onError(Throwable t) { }
        @Override public void onComplete() { }
    };

    @Test
    void workerAndRunner() throws Exception {
        Graph research = JavaGraph.builder("research", schema)
            .node("search", ctx -> ctx.set(answer, "on " + ctx.get(question)))
            .start("search")
            .build();
        State input = schema.initialState().with(question, "Why is the sky blue?");
        try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
            env.start();
            WorkflowClient client = env.getWorkflowClient();

            InMemoryLiveEvents live = new InMemoryLiveEvents();
            WorkerFactory factory = WorkerFactory.newInstance(client);
            Worker worker = factory.newWorker("research");
            TemporalWorkers.register(worker, List.of(research), new TemporalOptions().withLiveEvents(live));
            factory.start();

            TemporalRunner runner = new TemporalRunner(client, "research", live);
            TemporalRun run = runner.start(research, input, "order-42");
            run.eventsPublisher().subscribe(subscriber);            // a Reactive Streams Subscriber<RunEvent>
            TemporalRunResult result = run.resultAsync().join();   // or run.awaitBlocking()
            String progress = run.progress();                      // a workflow Query, see below

            assertEquals(Status.COMPLETED, result.getStatus());
            assertEquals("on Why is the sky blue?", result.getState().get(answer));
            assertTrue(progress.contains("\"search\":\"NodeCompleted\""), progress);
            factory.shutdownNow();
        }
    }

    @Test
    void answerAnInterrupt() throws Exception {
        StateSchema approvalSchema = new StateSchema("java-docs-approval");
        StateKey<String> decision = Keys.of(approvalSchema, "decision", String.class, "");
        Graph approval = JavaGraph.builder("approval", approvalSchema)
            .node("approve", ctx -> ctx.set(decision, ctx.interrupt("Publish the draft?")))
            .start("approve")
            .build();
        try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
            TemporalWorkers.register(env.newWorker("approval"), List.of(approval));
            env.start();
            TemporalRun run = new TemporalRunner(env.getWorkflowClient(), "approval")
                .start(approval, approvalSchema.initialState(), "approve-42");
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (run.interrupts().isEmpty() && System.nanoTime() < deadline) Thread.sleep(20);

            Map<String, String> asked = run.interrupts();
            run.answerAsync("approve", "yes").join();   // or run.answerBlocking("approve", "yes")

            assertEquals(Map.of("approve", "Publish the draft?"), asked);
            assertEquals("yes", run.awaitBlocking().getState().get(decision));
        }
    }

    @Test
    void continueAsNewThreshold() throws Exception {
        Graph research = JavaGraph.builder("research", schema)
            .node("search", ctx -> ctx.set(answer, "on " + ctx.get(question)))
            .start("search")
            .build();
        try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
            Worker worker = env.newWorker("research");
            TemporalWorkers.register(worker, List.of(research), new TemporalOptions().withContinueAsNewAfterEvents(5_000));
            env.start();
            State input = schema.initialState().with(question, "Why is the sky blue?");
            TemporalRunResult result = new TemporalRunner(env.getWorkflowClient(), "research")
                .start(research, input, "segments-42").awaitBlocking();
            assertEquals("on Why is the sky blue?", result.getState().get(answer));
        }
    }

    @Test
    void localNodesHeartbeatsAndABudget() throws Exception {
        Graph research = JavaGraph.builder("research", schema)
            .node("classify", ctx -> ctx.set(answer, "question"))
            .node("search", ctx -> {
                ctx.charge("usd", 0.42);
                ctx.set(answer, "on " + ctx.get(question));
            })
            .start("classify")
            .edge("classify", "search")
            .build();
        try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
            Worker worker = env.newWorker("research");
            TemporalWorkers.register(worker, List.of(research),
                new TemporalOptions().withLocalNodes(Set.of("classify")).withHeartbeatTimeout(Duration.ofSeconds(30)));
            env.start();
            TemporalRunner runner = new TemporalRunner(env.getWorkflowClient(), "research");
            State input = schema.initialState().with(question, "Why is the sky blue?");

            TemporalRun run = runner.start(research, input, "order-43", new Budget().withMeter("usd", 2.0));
            Map<String, Double> meters = run.awaitBlocking().getMeters();

            assertEquals(Map.of("usd", 0.42), meters);
            assertEquals("on Why is the sky blue?", run.awaitBlocking().getState().get(answer));
        }
    }

    @Test
    void liveEventsAcrossJvms() throws Exception {
        Graph research = JavaGraph.builder("research", schema)
            .node("search", ctx -> ctx.set(answer, "on " + ctx.get(question)))
            .start("search")
            .build();
        State input = schema.initialState().with(question, "Why is the sky blue?");
        DataSource dataSource = TestPostgres.INSTANCE.getDataSource();
        try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
            Worker worker = env.newWorker("research");
            WorkflowClient client = env.getWorkflowClient();

            // On every worker and every caller, each in its own JVM: the same database (and table).
            PostgresLiveEvents live = new PostgresLiveEvents(dataSource); // table trellis_live_events
            TemporalWorkers.register(worker, List.of(research), new TemporalOptions().withLiveEvents(live));
            env.start();
            TemporalRunner runner = new TemporalRunner(client, "research", live);
            runner.start(research, input).eventsPublisher().subscribe(subscriber);

            long deadline = System.nanoTime() + 120_000_000_000L;
            while (received.stream().noneMatch(RunEvent::isTerminal) && System.nanoTime() < deadline) Thread.sleep(20);
            RunEvent last = received.get(received.size() - 1);
            assertTrue(last instanceof RunEvent.RunCompleted, received::toString);
            assertEquals("on Why is the sky blue?", ((RunEvent.RunCompleted) last).getResult().getState().get(answer));
            live.close();
        }
    }
}
