package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.trellis.graph.Graph;
import dev.trellis.graph.Retry;
import dev.trellis.graph.NodeWrites;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.RunResult;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Java interceptors: {@code JavaNodeInterceptor}, installed per run, per graph and per node (docs/semantics.md §13). */
class InterceptorsTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    private static JavaNodeInterceptor tracing(String name, List<String> trace) {
        return chain -> {
            trace.add(name + ">" + chain.getNodeId());
            NodeWrites writes = chain.proceed();
            trace.add("<" + name);
            return writes;
        };
    }

    @Test
    void runLevelWrapsGraphLevelWrapsNodeLevelFirstInstalledOutermost() throws Exception {
        List<String> trace = Collections.synchronizedList(new ArrayList<>());
        Graph graph = JavaGraph.builder("order", s.schema)
            .node("a", ctx -> trace.add("body"))
            .intercept("a", tracing("node", trace))
            .intercept(tracing("graph1", trace))
            .intercept(tracing("graph2", trace))
            .start("a")
            .build();
        JavaRunOptions settings = JavaRunOptions.builder().intercept(tracing("run", trace)).build();
        Trellis.runner(graph, settings).invoke(Map.of("question", "q"));
        assertEquals(List.of("run>a", "graph1>a", "graph2>a", "node>a", "body", "<node", "<graph2", "<graph1", "<run"), trace);
    }

    @Test
    void anInterceptorThatWrapsMapTasksSeesEachTaskAttempt() throws Exception {
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        JavaNodeInterceptor perTask = new JavaNodeInterceptor() {
            @Override
            public NodeWrites intercept(JavaNodeInterceptor.Chain chain) throws Exception {
                seen.add(chain.getPath() + " " + chain.getTask() + " " + chain.getAttempt());
                NodeWrites writes = chain.proceed();
                return chain.getTask() < 0 ? writes : writes.map(s.log, l -> List.of(l.get(0).toUpperCase()));
            }

            @Override
            public boolean getWrapsMapTasks() {
                return true;
            }
        };
        Graph graph = JavaGraph.builder("tasks", s.schema)
            .node("plan", ctx -> ctx.set(s.log, List.of("x", "y")))
            .map("echo", s.log, (ctx, item) -> ctx.set(s.log, List.of(item + "!")))
            .intercept("echo", perTask)
            .start("plan")
            .edge("plan", "echo")
            .build();
        RunResult result = Trellis.runner(graph).invoke(Map.of("question", "q"));
        assertEquals(List.of("x", "y", "X!", "Y!"), result.getState().get(s.log));
        Collections.sort(seen);
        assertEquals(List.of("echo -1 1", "echo[0] 0 1", "echo[1] 1 1"), seen);
    }

    @Test
    void anInterceptorSeesTheAttemptAndChangesTheWrites() throws Exception {
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        Graph graph = JavaGraph.builder("redact", s.schema)
            .blockingNode("a", ctx -> {
                ctx.set(s.count, 41);
                if (ctx.getAttempt() == 1) throw new IOException("flaky");
            }, NodeOptions.retry(Retry.fixed(2, Duration.ofMillis(1))))
            .intercept(chain -> {
                seen.add(chain.getNodeId() + " attempt " + chain.getAttempt() + " #" + chain.getExecutionCount()
                    + " " + chain.getState().get(s.question));
                return chain.proceed().map(s.count, c -> c + 1);
            })
            .start("a")
            .build();
        RunResult result = Trellis.runner(graph).invoke(Map.of("question", "why?"));
        assertEquals(42, result.getState().get(s.count));
        assertEquals(List.of("a attempt 1 #1 why?", "a attempt 2 #1 why?"), seen);
    }

    @Test
    void anInterceptorMayShortCircuitOrProceedTwice() throws Exception {
        AtomicInteger bodyRuns = new AtomicInteger();
        Graph graph = JavaGraph.builder("short", s.schema)
            .node("cached", ctx -> bodyRuns.incrementAndGet())
            .node("twice", ctx -> ctx.set(s.log, List.of("run " + bodyRuns.incrementAndGet())))
            .intercept("cached", chain -> NodeWrites.of(s.count, 7))
            .intercept("twice", chain -> {
                chain.proceed();
                return chain.proceed();
            })
            .start("cached")
            .edge("cached", "twice")
            .build();
        RunResult result = Trellis.runner(graph).invoke(Map.of("question", "q"));
        assertEquals(7, result.getState().get(s.count));
        assertEquals(List.of("run 2"), result.getState().get(s.log));
        assertEquals(2, bodyRuns.get());
    }

    @Test
    void aFailureOfTheBodyReachesTheInterceptorAsItIsAndMayBeReplacedByAFallback() throws Exception {
        IOException down = new IOException("search is down");
        List<Throwable> caught = Collections.synchronizedList(new ArrayList<>());
        Graph graph = JavaGraph.builder("fallback", s.schema)
            .node("search", ctx -> {
                throw down;
            })
            .intercept("search", chain -> {
                try {
                    return chain.proceed();
                } catch (IOException e) {
                    caught.add(e);
                    return NodeWrites.of(s.log, List.of("fallback"));
                }
            })
            .start("search")
            .build();
        RunResult result = Trellis.runner(graph).invoke(Map.of("question", "q"));
        assertEquals(List.of("fallback"), result.getState().get(s.log));
        assertEquals(1, caught.size());
        assertSame(down, caught.get(0));
    }

    @Test
    void anInterceptorsExceptionFailsTheRunAsItIs() {
        IOException refused = new IOException("over budget");
        Graph graph = JavaGraph.builder("refuse", s.schema)
            .node("a", ctx -> ctx.set(s.count, 1))
            .intercept(chain -> {
                throw refused;
            })
            .start("a")
            .build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(graph).invoke(Map.of("question", "q")));
        assertSame(refused, e.getCause());
    }

    @Test
    void cancellingTheRunInterruptsABlockedInterceptor() throws Exception {
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        Graph graph = JavaGraph.builder("cancel", s.schema)
            .node("a", ctx -> {})
            .intercept(chain -> {
                blocked.countDown();
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    interrupted.countDown();
                    throw e;
                }
                return chain.proceed();
            })
            .start("a")
            .build();
        var run = Trellis.runner(graph).invokeAsync(Map.of("question", "q"));
        Fixtures.await(blocked, "the interceptor to block");
        run.cancel(true);
        Fixtures.await(interrupted, "the interceptor to be interrupted");
    }
}
