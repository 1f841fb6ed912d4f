package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@code TrellisRunner.invoke} runs on the calling thread and is cancelled by interrupting it. */
class BlockingInvokeTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    @Test
    void aChainOfNodesRunsOnTheCallingThreadWithoutAHop() throws Exception {
        List<Thread> threads = new CopyOnWriteArrayList<>();
        Graph chain = JavaGraph.builder("chain", s.schema)
            .node("a", ctx -> threads.add(Thread.currentThread()))
            .node("b", ctx -> threads.add(Thread.currentThread()))
            .node("c", ctx -> {
                threads.add(Thread.currentThread());
                ctx.update(s.count, c -> c + 1);
            })
            .start("a").edge("a", "b").edge("b", "c")
            .build();
        RunResult result = Trellis.runner(chain).invoke(Map.of("question", "q"));
        assertEquals(1, result.getState().get(s.count));
        assertEquals(List.of(Thread.currentThread(), Thread.currentThread(), Thread.currentThread()), threads);
    }

    @Test
    void interruptingTheCallerCancelsTheRunAndSaysSo() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch nodeInterrupted = new CountDownLatch(1);
        Graph blocker = JavaGraph.builder("blocker", s.schema)
            .blockingNode("block", ctx -> {
                started.countDown();
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    nodeInterrupted.countDown();
                    throw e;
                }
            })
            .start("block")
            .build();
        AtomicReference<InterruptedException> thrown = new AtomicReference<>();
        AtomicBoolean flagRestored = new AtomicBoolean();
        AtomicBoolean nodeEndedFirst = new AtomicBoolean();
        Thread caller = new Thread(() -> {
            try {
                Trellis.runner(blocker).invoke(Map.of("question", "q"));
            } catch (InterruptedException e) {
                flagRestored.set(Thread.currentThread().isInterrupted());
                nodeEndedFirst.set(nodeInterrupted.getCount() == 0); // invoke returned only once the run had ended
                thrown.set(e);
            }
        }, "invoking-thread");
        caller.start();
        Fixtures.await(started, "the node to start");
        caller.interrupt();
        caller.join(Fixtures.WAIT.toMillis());
        assertFalse(caller.isAlive(), "invoke returned");

        assertNotNull(thrown.get(), "invoke threw InterruptedException");
        assertTrue(thrown.get().getMessage().contains("graph 'blocker' was interrupted"), thrown.get().getMessage());
        assertTrue(thrown.get().getMessage().contains("its run was cancelled"), thrown.get().getMessage());
        assertTrue(flagRestored.get(), "the interrupt flag is set again");
        assertTrue(nodeEndedFirst.get(), "the blocking node was interrupted before invoke returned");
    }

    @Test
    void anAlreadyInterruptedThreadStartsNoRun() {
        AtomicBoolean ran = new AtomicBoolean();
        Graph graph = JavaGraph.builder("never", s.schema).node("n", ctx -> ran.set(true)).start("n").build();
        Thread.currentThread().interrupt();
        try {
            InterruptedException e = org.junit.jupiter.api.Assertions.assertThrows(InterruptedException.class,
                () -> Trellis.runner(graph).invoke(Map.of("question", "q")));
            assertTrue(e.getMessage().contains("no run was started"), e.getMessage());
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
        assertFalse(ran.get());
    }

    @Test
    void withAnExecutorInTheSettingsTheRunGoesThere() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor(r -> new Thread(r, "run-pool"));
        try {
            AtomicReference<Thread> thread = new AtomicReference<>();
            Graph graph = JavaGraph.builder("pooled", s.schema).node("n", ctx -> thread.set(Thread.currentThread())).start("n").build();
            RunResult result = Trellis.runner(graph, JavaRunOptions.builder().executor(pool).build()).invoke(Map.of("question", "q"));
            assertSame(Status.COMPLETED, result.getStatus());
            assertTrue(thread.get().getName().startsWith("run-pool"), thread.get().getName());
        } finally {
            pool.shutdownNow();
        }
    }
}
