package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.runtime.RunEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.FlowAdapters;

/** Behaviour of both publishers: {@code events} (JDK Flow) and {@code reactiveEvents} (Reactive Streams). */
class PublishersTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    /** Subscribes {@code recorder} to the run of {@code graph} through the publisher named {@code kind}. */
    private static void subscribe(String kind, Graph graph, Map<String, ?> input, Fixtures.Recorder recorder) {
        TrellisRunner runner = Trellis.runner(graph);
        if (kind.equals("flow")) {
            runner.events(input).subscribe(FlowAdapters.toFlowSubscriber(recorder));
        } else {
            runner.reactiveEvents(input).subscribe(recorder);
        }
    }

    private static void subscribe(String kind, Graph graph, State input, Fixtures.Recorder recorder) {
        TrellisRunner runner = Trellis.runner(graph);
        if (kind.equals("flow")) {
            runner.events(input).subscribe(FlowAdapters.toFlowSubscriber(recorder));
        } else {
            runner.reactiveEvents(input).subscribe(recorder);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"flow", "reactive"})
    void eventsComeInOrderAndFollowThePairingRules(String kind) throws Exception {
        Graph diamond = JavaGraph.builder("diamond", s.schema)
            .node("s", ctx -> ctx.set(s.log, List.of("s")))
            .node("a", ctx -> {
                ctx.emit("a1");
                ctx.emit("a2");
                ctx.set(s.log, List.of("a"));
            })
            .asyncNode("b", ctx -> {
                ctx.set(s.log, List.of("b"));
                return java.util.concurrent.CompletableFuture.completedFuture(null);
            })
            .node("j", ctx -> ctx.set(s.log, List.of("j")))
            .start("s").edge("s", "a").edge("s", "b").edge("a", "j").edge("b", "j")
            .build();
        Fixtures.Recorder recorder = new Fixtures.Recorder();
        subscribe(kind, diamond, s.schema.stateOf(Map.of("question", "q")), recorder);
        recorder.request(Long.MAX_VALUE);
        recorder.awaitDone();
        assertTrue(recorder.completed);
        assertNull(recorder.error);
        List<RunEvent> events = new ArrayList<>(recorder.events);

        assertInstanceOf(RunEvent.RunStarted.class, events.get(0));
        assertInstanceOf(RunEvent.RunCompleted.class, events.get(events.size() - 1));
        for (int i = 0; i < events.size(); i++) assertEquals(i, events.get(i).getSequence(), "sequence without gaps");
        assertEquals(1, events.stream().filter(e -> e instanceof RunEvent.RunCompleted).count());

        Map<String, Integer> open = new HashMap<>();
        Map<String, Integer> ended = new HashMap<>();
        for (int i = 0; i < events.size(); i++) {
            RunEvent e = events.get(i);
            if (e instanceof RunEvent.NodeStarted started) {
                assertNull(open.put(started.getNodeId() + "#" + started.getExecution(), i));
            } else if (e instanceof RunEvent.NodeCompleted done) {
                String id = done.getNodeId() + "#" + done.getExecution();
                assertTrue(open.containsKey(id), "completed after started: " + id);
                assertNull(ended.put(id, i), "exactly one end per start: " + id);
            } else if (e instanceof RunEvent.Custom custom) {
                String id = custom.getNodeId() + "#" + custom.getExecution();
                assertTrue(open.containsKey(id) && !ended.containsKey(id), "custom events between start and end");
            } else if (e instanceof RunEvent.EdgeTaken edge) {
                assertTrue(ended.keySet().stream().anyMatch(k -> k.startsWith(edge.getFrom() + "#")), "edge after its node completed");
            }
        }
        assertEquals(open.keySet(), ended.keySet());
        assertEquals(4, ended.size());
        List<Object> payloads = events.stream().filter(e -> e instanceof RunEvent.Custom).map(e -> ((RunEvent.Custom) e).getPayload()).toList();
        assertEquals(List.of("a1", "a2"), payloads);
        RunEvent.RunCompleted last = (RunEvent.RunCompleted) events.get(events.size() - 1);
        assertEquals("s", last.getResult().getState().get(s.log).get(0));
        assertEquals("j", last.getResult().getState().get(s.log).get(3));
    }

    @ParameterizedTest
    @ValueSource(strings = {"flow", "reactive"})
    void cancellingTheSubscriptionCancelsTheRun(String kind) throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        Graph blocker = JavaGraph.builder("blocker", s.schema)
            .blockingNode("block", ctx -> {
                started.countDown();
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    interrupted.countDown();
                    throw e;
                }
            })
            .start("block")
            .build();
        Fixtures.Recorder recorder = new Fixtures.Recorder();
        subscribe(kind, blocker, Map.of("question", "q"), recorder);
        recorder.request(Long.MAX_VALUE);
        Fixtures.await(started, "the node to start");
        recorder.subscription.cancel();
        Fixtures.await(interrupted, "the node to be interrupted");
    }

    /**
     * Waits until {@code producer} is parked inside {@code JavaNodeScope.emit} or has emitted all {@code total}
     * payloads. A node's emit sends straight to the run's bounded event buffer, so it parks only when that
     * buffer is full because the subscriber asked for no more: a producer that runs ahead never parks there and
     * emits everything instead. Either way the state is then stable until the test requests more.
     */
    private static void awaitParkedInEmitOrDone(Thread producer, AtomicInteger emitted, int total) {
        long deadline = System.nanoTime() + Fixtures.WAIT.toNanos();
        while (emitted.get() < total && !parkedInEmit(producer.getStackTrace())) {
            if (System.nanoTime() > deadline) {
                fail("the producer neither parked in emit nor finished, at " + Arrays.toString(producer.getStackTrace()));
            }
            Thread.yield();
        }
    }

    private static boolean parkedInEmit(StackTraceElement[] stack) {
        boolean parked = Arrays.stream(stack).anyMatch(f -> f.getClassName().equals(LockSupport.class.getName()));
        boolean inEmit = Arrays.stream(stack)
            .anyMatch(f -> f.getClassName().equals(JavaNodeScope.class.getName()) && f.getMethodName().equals("emit"));
        return parked && inEmit;
    }

    @ParameterizedTest
    @ValueSource(strings = {"flow", "reactive"})
    void demandIsHonouredAndASlowSubscriberBackPressuresTheRun(String kind) throws Exception {
        int payloads = 2_000;
        AtomicInteger emitted = new AtomicInteger();
        AtomicReference<Thread> producer = new AtomicReference<>();
        CountDownLatch producing = new CountDownLatch(1);
        Graph graph = JavaGraph.builder("emitter", s.schema)
            .blockingNode("emit", ctx -> {
                producer.set(Thread.currentThread());
                producing.countDown();
                for (int i = 0; i < payloads; i++) {
                    ctx.emit(i);
                    emitted.incrementAndGet();
                }
            })
            .start("emit")
            .build();
        Fixtures.Recorder recorder = new Fixtures.Recorder();
        subscribe(kind, graph, Map.of("question", "q"), recorder);
        recorder.request(5);
        recorder.awaitEvents(5);
        Fixtures.await(producing, "the node to start");
        awaitParkedInEmitOrDone(producer.get(), emitted, payloads);
        assertEquals(5, recorder.events.size(), "no more events than requested");
        assertTrue(emitted.get() < 200, "the run is suspended by the slow subscriber, emitted " + emitted.get());

        recorder.request(10);
        recorder.awaitEvents(10);
        awaitParkedInEmitOrDone(producer.get(), emitted, payloads);
        assertEquals(15, recorder.events.size(), "no more events than requested");
        assertTrue(emitted.get() < 200, "the run is suspended again, emitted " + emitted.get());

        recorder.request(Long.MAX_VALUE);
        recorder.awaitDone();
        assertEquals(payloads + 4, recorder.events.size(), "nothing dropped");
        for (int i = 0; i < recorder.events.size(); i++) assertEquals(i, recorder.events.get(i).getSequence());
        List<Object> got = recorder.events.stream().filter(e -> e instanceof RunEvent.Custom).map(e -> ((RunEvent.Custom) e).getPayload()).toList();
        for (int i = 0; i < payloads; i++) assertEquals(i, got.get(i));
    }

    @ParameterizedTest
    @ValueSource(strings = {"flow", "reactive"})
    void everySubscriptionIsAFreshRun(String kind) throws Exception {
        Graph graph = Fixtures.emitter(1);
        Fixtures.Recorder first = new Fixtures.Recorder();
        Fixtures.Recorder second = new Fixtures.Recorder();
        TrellisRunner runner = Trellis.runner(graph);
        BiConsumer<Fixtures.Recorder, Object> sub = (r, ignored) -> {
            if (kind.equals("flow")) runner.events(Map.of()).subscribe(FlowAdapters.toFlowSubscriber(r));
            else runner.reactiveEvents(Map.of()).subscribe(r);
        };
        sub.accept(first, null);
        sub.accept(second, null);
        first.request(Long.MAX_VALUE);
        second.request(Long.MAX_VALUE);
        first.awaitDone();
        second.awaitDone();
        assertEquals(5, first.events.size());
        assertEquals(5, second.events.size());
        assertTrue(!first.events.get(0).getRunId().equals(second.events.get(0).getRunId()));
    }
}
