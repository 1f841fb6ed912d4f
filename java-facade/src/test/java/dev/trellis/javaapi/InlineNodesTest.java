package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.reactivestreams.FlowAdapters;

/** {@code node} runs inline on the run's own threads; {@code blockingNode} on the executor, never starving anyone. */
class InlineNodesTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    @Test
    void aNodeRunsOnTheRunsWorkerAndABlockingNodeOnTheExecutor() throws Exception {
        AtomicReference<Thread> inline = new AtomicReference<>();
        AtomicReference<Thread> blocking = new AtomicReference<>();
        Graph graph = JavaGraph.builder("where", s.schema)
            .node("inline", ctx -> inline.set(Thread.currentThread()))
            .blockingNode("blocking", ctx -> blocking.set(Thread.currentThread()))
            .start("inline").edge("inline", "blocking")
            .build();
        // invokeAsync starts the run on the calling thread: the first node runs here, with no hand-off.
        Trellis.runner(graph).invokeAsync(Map.of("question", "q")).get();
        assertSame(Thread.currentThread(), inline.get(), inline.get().getName());
        boolean virtual = Runtime.version().feature() >= 21
            && (Boolean) Thread.class.getMethod("isVirtual").invoke(blocking.get());
        assertTrue(virtual || blocking.get().getName().startsWith("trellis-node-"), blocking.get().getName());
    }

    /**
     * Every blocking node waits until all of them are blocked at once and a branch of quick nodes has finished: it
     * passes only if the blocking nodes hold no thread the others need (no fixed pool, no coroutine worker).
     */
    @ParameterizedTest
    @ValueSource(ints = {64, 200})
    void parallelBlockingNodesAllRunAtOnceAndStarveNoOtherBranch(int width) throws Exception {
        CountDownLatch allBlocked = new CountDownLatch(width);
        CountDownLatch quickDone = new CountDownLatch(1);
        JavaGraph.Builder builder = JavaGraph.builder("wide", s.schema)
            .node("split", ctx -> {})
            .node("quick-1", ctx -> ctx.set(s.log, List.of("quick-1")))
            .node("quick-2", ctx -> {
                ctx.set(s.log, List.of("quick-2"));
                quickDone.countDown();
            })
            .node("join", ctx -> ctx.update(s.count, c -> c + 1))
            .start("split")
            .edge("split", "quick-1").edge("quick-1", "quick-2").edge("quick-2", "join");
        for (int i = 0; i < width; i++) {
            String id = "wait-" + i;
            builder.blockingNode(id, ctx -> {
                allBlocked.countDown();
                Fixtures.await(allBlocked, "every blocking node to be blocked at once");
                Fixtures.await(quickDone, "the quick branch to finish while the blocking nodes block");
                ctx.set(s.log, List.of(ctx.getNodeId()));
            });
            builder.edge("split", id).edge(id, "join");
        }
        RunResult result = Trellis.runner(builder.build()).invoke(Map.of("question", "q"), Duration.ofSeconds(60));
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(width + 2, result.getState().get(s.log).size());
        assertEquals(1, result.getState().get(s.count), "the join ran once, after every branch");
    }

    /**
     * Two parallel nodes emit many events to a subscriber that asks for only five: their emits must not block (on a
     * 2-core machine two blocked workers would be all of the coroutine pool, the subscriber's included), yet the
     * events all arrive, in order, before each node's completion.
     */
    @Test
    void emitInANodeNeverBlocksYetDeliversEverythingInOrder() throws Exception {
        int payloads = 500;
        CountDownLatch emitted = new CountDownLatch(2);
        Graph graph = JavaGraph.builder("chatty", s.schema)
            .node("split", ctx -> {})
            .node("a", ctx -> {
                for (int i = 0; i < payloads; i++) ctx.emit("a" + i);
                emitted.countDown();
            })
            .node("b", ctx -> {
                for (int i = 0; i < payloads; i++) ctx.emit("b" + i);
                emitted.countDown();
            })
            .node("join", ctx -> {})
            .start("split").edge("split", "a").edge("split", "b").edge("a", "join").edge("b", "join")
            .build();
        Fixtures.Recorder recorder = new Fixtures.Recorder();
        Trellis.runner(graph).events(Map.of("question", "q")).subscribe(FlowAdapters.toFlowSubscriber(recorder));
        recorder.request(5);
        recorder.awaitEvents(5);
        Fixtures.await(emitted, "both nodes to finish emitting while the subscriber waits");
        assertEquals(5, recorder.events.size(), "no more events than requested");

        recorder.request(Long.MAX_VALUE);
        recorder.awaitDone();
        assertNull(recorder.error);
        List<RunEvent> events = new ArrayList<>(recorder.events);
        assertInstanceOf(RunEvent.RunCompleted.class, events.get(events.size() - 1));
        Map<String, List<Object>> payloadsByNode = new HashMap<>();
        Map<String, Integer> started = new HashMap<>();
        Map<String, Integer> completed = new HashMap<>();
        for (int i = 0; i < events.size(); i++) {
            RunEvent e = events.get(i);
            assertEquals(i, e.getSequence());
            if (e instanceof RunEvent.NodeStarted n) started.put(n.getNodeId(), i);
            if (e instanceof RunEvent.NodeCompleted n) completed.put(n.getNodeId(), i);
            if (e instanceof RunEvent.Custom c) {
                assertTrue(started.containsKey(c.getNodeId()) && !completed.containsKey(c.getNodeId()),
                    "custom events between the node's start and its completion");
                payloadsByNode.computeIfAbsent(c.getNodeId(), k -> new ArrayList<>()).add(c.getPayload());
            }
        }
        for (String node : List.of("a", "b")) {
            List<Object> expected = new ArrayList<>();
            for (int i = 0; i < payloads; i++) expected.add(node + i);
            assertEquals(expected, payloadsByNode.get(node));
        }
    }

    @Test
    void anAsyncNodeEmitsInItsActionAndFromItsOwnThreads() throws Exception {
        Graph graph = JavaGraph.builder("async-emits", s.schema)
            .asyncNode("work", ctx -> {
                ctx.emit("in the action");
                return CompletableFuture.runAsync(() -> {
                    ctx.emit("from another thread 1");
                    ctx.emit("from another thread 2");
                });
            })
            .start("work")
            .build();
        Fixtures.Recorder recorder = new Fixtures.Recorder();
        Trellis.runner(graph).events(Map.of("question", "q")).subscribe(FlowAdapters.toFlowSubscriber(recorder));
        recorder.request(Long.MAX_VALUE);
        recorder.awaitDone();
        List<Object> payloads = recorder.events.stream()
            .filter(e -> e instanceof RunEvent.Custom).map(e -> ((RunEvent.Custom) e).getPayload()).toList();
        assertEquals(List.of("in the action", "from another thread 1", "from another thread 2"), payloads);
    }

    @Test
    void aFailingNodesEventsStillComeBeforeItsFailure() throws Exception {
        IllegalStateException boom = new IllegalStateException("boom");
        Graph graph = JavaGraph.builder("emit-then-fail", s.schema)
            .node("n", ctx -> {
                for (int i = 0; i < 200; i++) ctx.emit(i);
                throw boom;
            })
            .start("n")
            .build();
        List<RunEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        RunResult result = Trellis.runner(graph).start(Map.of("question", "q"), events::add).result().get();
        assertEquals(Status.FAILED, result.getStatus());
        assertFalse(result.getErrors().isEmpty());
        assertTrue(result.getError() == boom, "the node's own exception");
        int failedAt = -1;
        int customs = 0;
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i) instanceof RunEvent.NodeFailed) failedAt = i;
            if (events.get(i) instanceof RunEvent.Custom) {
                customs++;
                assertEquals(-1, failedAt, "custom events before the failure");
            }
        }
        assertEquals(200, customs);
    }
}
