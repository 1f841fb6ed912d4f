package dev.trellis.temporal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.Status;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** From Java: a run's events as a Reactive Streams Publisher, and its interrupt answered through a future. */
class JavaTemporalLiveTest {
    private final StateSchema schema = new StateSchema("java-temporal-live");
    private final StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
    private TestWorkflowEnvironment env;
    private TemporalRunner runner;

    private Graph graph() {
        return JavaGraph.builder("java-live", schema)
            .node("ask", ctx -> {
                ctx.emit("thinking");
                String answer = ctx.interrupt("Which colour?");
                ctx.set(log, List.of("colour " + answer));
            })
            .start("ask")
            .build();
    }

    @BeforeEach
    void setUp() {
        env = TestWorkflowEnvironment.newInstance();
        Worker worker = env.newWorker("java-live");
        InMemoryLiveEvents live = new InMemoryLiveEvents();
        TemporalWorkers.register(worker, List.of(graph()), new TemporalOptions().withLiveEvents(live));
        env.start();
        runner = new TemporalRunner(env.getWorkflowClient(), "java-live", live);
    }

    @AfterEach
    void tearDown() {
        env.close();
    }

    private static Map<String, String> pending(TemporalRun run) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Map<String, String> asked = run.interrupts();
            if (!asked.isEmpty()) return asked;
            Thread.sleep(20);
        }
        throw new AssertionError("nothing asked within 60 s: " + run.progress());
    }

    @Test
    void streamsEventsAndAnswersAnInterrupt() throws Exception {
        Graph graph = graph();
        TemporalRun run = runner.start(graph, schema.initialState(), "java-live-1");
        List<RunEvent> events = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        run.eventsPublisher().subscribe(new Subscriber<RunEvent>() {
            @Override public void onSubscribe(Subscription s) { s.request(Long.MAX_VALUE); }
            @Override public void onNext(RunEvent event) { events.add(event); }
            @Override public void onError(Throwable t) { done.countDown(); }
            @Override public void onComplete() { done.countDown(); }
        });

        assertEquals(Map.of("ask", "Which colour?"), pending(run));
        ExecutionException unknown =
            assertThrows(ExecutionException.class, () -> run.answerAsync("asks", "blue").get(60, TimeUnit.SECONDS));
        assertInstanceOf(IllegalArgumentException.class, unknown.getCause());
        assertTrue(unknown.getCause().getMessage().contains("no pending interrupt 'asks'"), unknown.getCause().getMessage());

        run.answerAsync("ask", "blue").get(60, TimeUnit.SECONDS);
        TemporalRunResult result = run.resultAsync().get(60, TimeUnit.SECONDS);
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(List.of("colour blue"), result.getState().get(log));

        assertTrue(done.await(60, TimeUnit.SECONDS));
        assertInstanceOf(RunEvent.RunStarted.class, events.get(0));
        assertInstanceOf(RunEvent.RunCompleted.class, events.get(events.size() - 1));
        // Emitted before the interrupt, and again when the node ran with the answer: two payloads, as locally.
        assertEquals(
            List.of("thinking", "thinking"),
            events.stream().filter(e -> e instanceof RunEvent.Custom).map(e -> ((RunEvent.Custom) e).getPayload()).toList());
    }
}
