package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.State;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class TrellisRunnerTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    private final CountDownLatch started = new CountDownLatch(1);
    private final CountDownLatch interrupted = new CountDownLatch(1);

    /** question -> greet (writes log, count) */
    private Graph greeter() {
        return JavaGraph.builder("greeter", s.schema)
            .node("greet", ctx -> {
                ctx.set(s.log, List.of("hello " + ctx.get(s.question)));
                ctx.update(s.count, c -> c + 1);
            })
            .start("greet")
            .build();
    }

    /** A node that blocks until it is interrupted, and records the interrupt. */
    private Graph blocker() {
        return JavaGraph.builder("blocker", s.schema)
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
    }

    private Graph failing(RuntimeException error) {
        return JavaGraph.builder("failing", s.schema)
            .node("ok", ctx -> ctx.set(s.log, List.of("ok")))
            .node("boom", ctx -> {
                throw error;
            })
            .start("ok")
            .edge("ok", "boom")
            .build();
    }

    @Test
    void invokeWithAMapRunsTheGraph() throws Exception {
        RunResult result = Trellis.runner(greeter()).invoke(Map.of("question", "world"));
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(List.of("hello world"), result.getState().get(s.log));
        assertEquals(1, result.getState().get(s.count));
    }

    @Test
    void invokeWithAStateRunsTheGraph() throws Exception {
        Graph graph = greeter();
        State input = s.schema.initialState().with(s.question, "state").with(s.count, 41);
        RunResult result = Trellis.runner(graph).invoke(input);
        assertEquals(42, result.getState().get(s.count));
    }

    @Test
    void invokeAsyncCompletesWithTheResult() throws Exception {
        TrellisRunner runner = Trellis.runner(greeter());
        RunResult byMap = runner.invokeAsync(Map.of("question", "async")).get();
        RunResult byState = runner.invokeAsync(s.schema.stateOf(Map.of("question", "async"))).get();
        assertEquals(List.of("hello async"), byMap.getState().get(s.log));
        assertEquals(byMap.getState(), byState.getState());
        assertFalse(byMap.getRunId().equals(byState.getRunId()), "every call is a fresh run");
    }

    @Test
    void invokeWithATimeoutReturnsWhenTheRunIsFastEnough() throws Exception {
        RunResult result = Trellis.runner(greeter()).invoke(Map.of("question", "quick"), Duration.ofSeconds(30));
        assertEquals(Status.COMPLETED, result.getStatus());
        RunResult byState = Trellis.runner(greeter()).invoke(s.schema.stateOf(Map.of("question", "quick")), Duration.ofSeconds(30));
        assertEquals(Status.COMPLETED, byState.getStatus());
    }

    @Test
    void invokeTimingOutThrowsTimeoutExceptionAndCancelsTheRun() throws Exception {
        TrellisRunner runner = Trellis.runner(blocker());
        TimeoutException e = assertThrows(TimeoutException.class,
            () -> runner.invoke(Map.of("question", "slow"), Duration.ofMillis(200)));
        assertTrue(e.getMessage().contains("'blocker' did not finish within PT0.2S"), e.getMessage());
        Fixtures.await(interrupted, "the node to be interrupted");
    }

    @Test
    void cancellingTheFutureInterruptsTheBlockingNode() throws Exception {
        CompletableFuture<RunResult> future = Trellis.runner(blocker()).invokeAsync(Map.of("question", "q"));
        Fixtures.await(started, "the node to start");
        assertTrue(future.cancel(true));
        Fixtures.await(interrupted, "the node to be interrupted");
        assertTrue(future.isCancelled());
    }

    @Test
    void cancellingTheFutureCancelsAnAsyncNodesStage() throws Exception {
        CompletableFuture<Void> work = new CompletableFuture<>();
        Graph graph = JavaGraph.builder("async", s.schema)
            .asyncNode("wait", ctx -> {
                started.countDown();
                return work;
            })
            .start("wait")
            .build();
        CompletableFuture<RunResult> future = Trellis.runner(graph).invokeAsync(Map.of("question", "q"));
        Fixtures.await(started, "the node to start");
        future.cancel(true);
        assertThrows(java.util.concurrent.CancellationException.class, () -> work.get(10, java.util.concurrent.TimeUnit.SECONDS));
        assertTrue(work.isCancelled());
    }

    @Test
    void aFailedRunFailsTheFutureWithGraphRunExceptionCausedByTheNodesOwnException() throws Exception {
        IllegalStateException boom = new IllegalStateException("boom");
        TrellisRunner runner = Trellis.runner(failing(boom));

        CompletionException joined = assertThrows(CompletionException.class, () -> runner.invokeAsync(Map.of("question", "q")).join());
        GraphRunException run = assertInstanceOf(GraphRunException.class, joined.getCause());
        assertSame(boom, run.getCause());
        assertNull(boom.getCause());
        assertEquals(Status.FAILED, run.getResult().getStatus());
        assertEquals(List.of("ok"), run.getResult().getState().get(s.log));
        assertSame(boom, run.getResult().node("boom").getError());

        ExecutionException got = assertThrows(ExecutionException.class, () -> runner.invokeAsync(Map.of("question", "q")).get());
        assertSame(boom, assertInstanceOf(GraphRunException.class, got.getCause()).getCause());

        GraphRunException thrown = assertThrows(GraphRunException.class, () -> runner.invoke(Map.of("question", "q")));
        assertSame(boom, thrown.getCause());
        GraphRunException timed = assertThrows(GraphRunException.class, () -> runner.invoke(Map.of("question", "q"), Duration.ofSeconds(30)));
        assertSame(boom, timed.getCause());
    }

    @Test
    void theCauseIsTheNodesOwnExceptionAlsoForNodesWithATimeout() {
        IllegalStateException boom = new IllegalStateException("boom");
        Graph graph = JavaGraph.builder("timed", s.schema)
            .node("boom", ctx -> {
                throw boom;
            }, NodeOptions.timeout(Duration.ofSeconds(30)))
            .start("boom")
            .build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(graph).invoke(Map.of("question", "q")));
        assertSame(boom, e.getCause());
    }

    @Test
    void checkedExceptionsOfNodesAreTheCauseToo() {
        java.io.IOException io = new java.io.IOException("disk on fire");
        Graph blocking = JavaGraph.builder("io", s.schema)
            .blockingNode("read", ctx -> {
                throw io;
            })
            .start("read")
            .build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(blocking).invoke(Map.of("question", "q")));
        assertSame(io, e.getCause());
        Graph inline = JavaGraph.builder("io", s.schema)
            .node("read", ctx -> {
                throw io;
            })
            .start("read")
            .build();
        assertSame(io, assertThrows(GraphRunException.class, () -> Trellis.runner(inline).invoke(Map.of("question", "q"))).getCause());
    }

    @Test
    void asyncNodeFailuresAreUnwrapped() {
        IllegalArgumentException failed = new IllegalArgumentException("failed stage");
        IllegalArgumentException thrownInStage = new IllegalArgumentException("thrown in a stage");
        Graph graph = JavaGraph.builder("async-failures", s.schema)
            .asyncNode("failed", ctx -> CompletableFuture.failedFuture(failed))
            .start("failed")
            .build();
        Graph chained = JavaGraph.builder("async-failures", s.schema)
            .asyncNode("chained", ctx -> CompletableFuture.supplyAsync(() -> 1).thenApply(x -> {
                throw thrownInStage;
            }))
            .start("chained")
            .build();
        assertSame(failed, assertThrows(GraphRunException.class, () -> Trellis.runner(graph).invoke(Map.of("question", "q"))).getCause());
        assertSame(thrownInStage, assertThrows(GraphRunException.class, () -> Trellis.runner(chained).invoke(Map.of("question", "q"))).getCause());
    }

    @Test
    void unknownInputKeysAreRejectedNamingTheKeyAndTheKnownKeys() {
        TrellisRunner runner = Trellis.runner(greeter());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> runner.invokeAsync(Map.of("questoin", "typo")));
        assertTrue(e.getMessage().contains("Unknown state key 'questoin'"), e.getMessage());
        assertTrue(e.getMessage().contains("Known keys: question, count, log"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> runner.invoke(Map.of("questoin", "typo")));
        assertThrows(IllegalArgumentException.class, () -> runner.events(Map.of("questoin", "typo")));
        assertThrows(IllegalArgumentException.class, () -> runner.reactiveEvents(Map.of("questoin", "typo")));
        assertThrows(IllegalArgumentException.class, () -> runner.start(Map.of("questoin", "typo"), event -> {}));
    }

    @Test
    void wronglyTypedInputIsRejectedNamingTheKeyAndBothTypes() {
        TrellisRunner runner = Trellis.runner(greeter());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> runner.invoke(Map.of("question", "q", "count", "three")));
        assertTrue(e.getMessage().contains("State key 'count'"), e.getMessage());
        assertTrue(e.getMessage().contains("holds values of type java.lang.Integer, but was given java.lang.String"), e.getMessage());
    }

    @Test
    void aMissingRequiredKeyFailsTheRunNamingTheKey() {
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(greeter()).invoke(Map.of()));
        assertInstanceOf(java.util.NoSuchElementException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("State key 'question'"), e.getCause().getMessage());
    }

    @Test
    void startPassesEveryEventInOrderAndCompletesTheResult() throws Exception {
        List<RunEvent> events = new CopyOnWriteArrayList<>();
        JavaRunHandle run = Trellis.runner(greeter()).start(Map.of("question", "callbacks"), events::add);
        RunResult result = run.result().get();
        assertTrue(run.isDone());
        assertEquals(run.getRunId(), result.getRunId());
        assertEquals(Status.COMPLETED, result.getStatus());
        assertInstanceOf(RunEvent.RunStarted.class, events.get(0));
        assertInstanceOf(RunEvent.RunCompleted.class, events.get(events.size() - 1));
        for (int i = 0; i < events.size(); i++) assertEquals(i, events.get(i).getSequence());
        assertTrue(run.toString().contains(run.getRunId()));
    }

    @Test
    void startWithAStateAndAFailingRunCompletesTheResultWithStatusFailed() throws Exception {
        IllegalStateException boom = new IllegalStateException("boom");
        List<RunEvent> events = new CopyOnWriteArrayList<>();
        JavaRunHandle run = Trellis.runner(failing(boom)).start(s.schema.stateOf(Map.of("question", "q")), events::add);
        RunResult result = run.result().get();
        assertEquals(Status.FAILED, result.getStatus());
        assertSame(boom, result.getError());
        assertSame(boom, ((RunEvent.RunFailed) events.get(events.size() - 1)).getError());
    }

    @Test
    void cancellingAStartedRunInterruptsItsNodesAndEndsItCancelled() throws Exception {
        AtomicReference<RunEvent> last = new AtomicReference<>();
        JavaRunHandle run = Trellis.runner(blocker()).start(Map.of("question", "q"), last::set);
        Fixtures.await(started, "the node to start");
        run.cancel();
        Fixtures.await(interrupted, "the node to be interrupted");
        RunResult result = run.result().get();
        assertEquals(Status.CANCELLED, result.getStatus());
        assertEquals(Status.CANCELLED, result.node("block").getStatus());
        assertInstanceOf(RunEvent.RunCancelled.class, last.get());
    }

    @Test
    void cancellingTheResultFutureCancelsTheRun() throws Exception {
        JavaRunHandle run = Trellis.runner(blocker()).start(Map.of("question", "q"), event -> {});
        Fixtures.await(started, "the node to start");
        run.result().cancel(true);
        Fixtures.await(interrupted, "the node to be interrupted");
    }

    @Test
    void aThrowingConsumerCancelsTheRunAndFailsTheResult() throws Exception {
        IllegalStateException consumerError = new IllegalStateException("consumer");
        JavaRunHandle run = Trellis.runner(blocker()).start(Map.of("question", "q"), event -> {
            if (event instanceof RunEvent.NodeStarted) {
                try {
                    Fixtures.await(started, "the node to start");
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                throw consumerError;
            }
        });
        Fixtures.await(interrupted, "the node to be interrupted");
        ExecutionException e = assertThrows(ExecutionException.class, () -> run.result().get());
        assertSame(consumerError, e.getCause());
    }
}
