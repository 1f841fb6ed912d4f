package dev.trellis.temporal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.Status;
import dev.trellis.testing.TestPostgres;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** From Java: a run's events through PostgreSQL as a Reactive Streams Publisher, each once, and again for a late caller. */
class JavaPostgresLiveEventsTest {
    private final StateSchema schema = new StateSchema("java-postgres-live");
    private final StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
    private final String table = "trellis_live_java_" + TestPostgres.INSTANCE.newSchema().substring("trellis_test_".length());
    private TestWorkflowEnvironment env;
    private PostgresLiveEvents live;
    private TemporalRunner runner;

    private Graph graph() {
        return JavaGraph.builder("java-postgres-live", schema)
            .node("talk", ctx -> {
                ctx.emit("tok-1");
                ctx.emit("tok-2");
                ctx.set(log, List.of("talked"));
            })
            .node("done", ctx -> ctx.set(log, List.of("done")))
            .start("talk")
            .edge("talk", "done")
            .build();
    }

    @BeforeEach
    void setUp() {
        env = TestWorkflowEnvironment.newInstance();
        Worker worker = env.newWorker("java-postgres-live");
        live = new PostgresLiveEvents(TestPostgres.INSTANCE.getDataSource(), table);
        TemporalWorkers.register(worker, List.of(graph()), new TemporalOptions().withLiveEvents(live));
        env.start();
        runner = new TemporalRunner(env.getWorkflowClient(), "java-postgres-live", live);
    }

    @AfterEach
    void tearDown() throws Exception {
        env.close();
        live.close();
        try (Connection c = TestPostgres.INSTANCE.getDataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    private static List<RunEvent> collect(TemporalRun run) throws Exception {
        return collect(run.eventsPublisher());
    }

    private static List<RunEvent> collect(Publisher<RunEvent> publisher) throws Exception {
        List<RunEvent> events = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        publisher.subscribe(new Subscriber<RunEvent>() {
            @Override public void onSubscribe(Subscription s) { s.request(Long.MAX_VALUE); }
            @Override public void onNext(RunEvent event) { events.add(event); }
            @Override public void onError(Throwable t) { done.completeExceptionally(t); }
            @Override public void onComplete() { done.complete(null); }
        });
        done.get(120, TimeUnit.SECONDS);
        return events;
    }

    private static String describe(RunEvent event) {
        String path = event instanceof RunEvent.NodeEvent ? ((RunEvent.NodeEvent) event).getPath() : "";
        String payload = event instanceof RunEvent.Custom ? ((RunEvent.Custom) event).getPayload().toString() : "";
        String edge = event instanceof RunEvent.EdgeTaken
            ? ((RunEvent.EdgeTaken) event).getFrom() + "->" + ((RunEvent.EdgeTaken) event).getTo() : "";
        String sequence = event instanceof RunEvent.Custom ? "" : Long.toString(event.getSequence());
        return event.getClass().getSimpleName() + ":" + path + ":" + payload + edge + ":" + sequence;
    }

    @Test
    void streamsTheRunThroughPostgresEachEventOnce() throws Exception {
        Graph graph = graph();
        TemporalRun run = runner.start(graph, schema.initialState(), "java-pg-live-1");
        List<RunEvent> events = collect(run);

        assertEquals(Status.COMPLETED, run.awaitBlocking().getStatus());
        List<String> described = events.stream().map(JavaPostgresLiveEventsTest::describe).collect(Collectors.toList());
        // Exactly the local run's events: kinds, paths, payloads, edges, sequence numbers (a live payload has -1).
        List<String> local = collect(Trellis.runner(graph).reactiveEvents(schema.initialState())).stream()
            .map(JavaPostgresLiveEventsTest::describe).collect(Collectors.toList());
        assertEquals(local, described);
        assertTrue(described.contains("Custom:talk:tok-1:"), described::toString);
        RunEvent.RunCompleted completed = assertInstanceOf(RunEvent.RunCompleted.class, events.get(events.size() - 1));
        assertEquals(List.of("talked", "done"), completed.getResult().getState().get(log));

        // A late subscriber, through another instance on the same table, gets the whole run again.
        try (PostgresLiveEvents other = new PostgresLiveEvents(TestPostgres.INSTANCE.getDataSource(), table)) {
            TemporalRun attached = new TemporalRunner(env.getWorkflowClient(), "java-postgres-live", other)
                .attach(graph, "java-pg-live-1");
            List<String> late = collect(attached).stream().map(JavaPostgresLiveEventsTest::describe)
                .collect(Collectors.toList());
            assertEquals(described, late);
        }
        assertTrue(live.flush(java.time.Duration.ofSeconds(30)));
        assertEquals(0L, live.getDropped());
    }
}
