package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.Retry;
import dev.trellis.graph.GraphValidationException;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.graph.TaskError;
import dev.trellis.graph.TaskFailure;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.NodeTimeoutException;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.FlowAdapters;

class CompositionJavaTest {
    /** The parent: a question, an appending log, a list of items, a single answer, collected errors. */
    private static final class Parent {
        final StateSchema schema = new StateSchema("parent");
        final StateKey<String> question = Keys.of(schema, "question", String.class, "");
        final StateKey<List<String>> log = Keys.appending(schema, "log", String.class);
        final StateKey<List<String>> items = Keys.of(schema, "items", (Class<List<String>>) (Class<?>) List.class, List.of());
        final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");
        final StateKey<List<TaskError>> errors = Keys.taskErrors(schema, "errors");
    }

    /** The child: a query, a prefix and an answer. */
    private static final class Child {
        final StateSchema schema = new StateSchema("child");
        final StateKey<String> q = Keys.of(schema, "q", String.class, "");
        final StateKey<String> prefix = Keys.of(schema, "prefix", String.class, "");
        final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");
    }

    private final Parent p = new Parent();
    private final Child c = new Child();
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "map-worker");
        thread.setDaemon(true);
        return thread;
    });

    @AfterEach
    void shutdown() {
        pool.shutdownNow();
    }

    /** ask -> answer: answer = prefix + q + "!" */
    private Graph childGraph() {
        return JavaGraph.builder("child", c.schema)
            .node("ask", ctx -> ctx.set(c.q, ctx.get(c.q).trim()))
            .node("answer", ctx -> ctx.set(c.answer, ctx.get(c.prefix) + ctx.get(c.q) + "!"))
            .start("ask")
            .edge("ask", "answer")
            .build();
    }

    private List<RunEvent> events(TrellisRunner runner, Map<String, Object> input) throws InterruptedException {
        Fixtures.Recorder recorder = new Fixtures.Recorder();
        runner.events(input).subscribe(FlowAdapters.toFlowSubscriber(recorder));
        recorder.request(Long.MAX_VALUE);
        recorder.awaitDone();
        assertTrue(recorder.completed, "the stream ended with " + recorder.error);
        return List.copyOf(recorder.events);
    }

    private static List<String> startedPaths(List<RunEvent> events) {
        return events.stream()
            .filter(e -> e instanceof RunEvent.NodeStarted)
            .map(e -> ((RunEvent.NodeStarted) e).getPath())
            .toList();
    }

    @Test
    void aSubgraphNodeMapsKeysAndBlocksBothWays() throws Exception {
        Graph graph = JavaGraph.builder("parent", p.schema)
            .subgraph("research", childGraph(), m -> m
                .input(p.question, c.q)
                .input(in -> in.set(c.prefix, in.getParent().get(p.question).length() + ":"))
                .output(c.answer, p.answer)
                .output((ctx, child) -> ctx.set(p.log, List.of(ctx.getNodeId() + " got " + child.get(c.answer)))))
            .start("research")
            .build();

        RunResult result = Trellis.runner(graph).invoke(Map.of("question", " q "));

        assertEquals("3:q!", result.getState().get(p.answer));
        assertEquals(List.of("research got 3:q!"), result.getState().get(p.log));
        assertEquals("3:q!", result.child("research").getState().get(c.answer));
    }

    @Test
    void aSubgraphWithoutMappingRunsFromTheChildsInitialStateAndWritesNothing() throws Exception {
        Graph graph = JavaGraph.builder("parent", p.schema)
            .subgraph("research", childGraph())
            .start("research")
            .build();

        RunResult result = Trellis.runner(graph).invoke(Map.of("question", "q"));

        assertEquals("", result.getState().get(p.answer));
        assertEquals("!", result.child("research").getState().get(c.answer));
    }

    @Test
    void childAndTaskEventsCarryTheirPaths() throws Exception {
        Graph graph = JavaGraph.builder("parent", p.schema)
            .subgraph("research", childGraph(), m -> m.input(p.question, c.q).output(c.answer, p.answer))
            .map("shout", p.items, (ctx, item) -> ctx.set(p.log, List.of(item.toUpperCase())), MapOptions.maxConcurrency(1))
            .start("research")
            .edge("research", "shout")
            .build();

        List<RunEvent> events = events(Trellis.runner(graph), Map.of("question", "q", "items", List.of("a", "b")));

        assertEquals(
            List.of("research", "research/ask", "research/answer", "shout", "shout[0]", "shout[1]"),
            startedPaths(events));
        List<Integer> tasks = events.stream()
            .filter(e -> e instanceof RunEvent.NodeCompleted)
            .map(e -> ((RunEvent.NodeCompleted) e).getTask())
            .toList();
        assertEquals(List.of(-1, -1, -1, 0, 1, -1), tasks);
        RunEvent.RunCompleted last = assertInstanceOf(RunEvent.RunCompleted.class, events.get(events.size() - 1));
        assertEquals(List.of("A", "B"), last.getResult().getState().get(p.log));
    }

    @Test
    void anInlineMapRunsATaskPerItemOnTheRunsThreadsAndWritesInTaskOrder() throws Exception {
        Graph graph = JavaGraph.builder("parent", p.schema)
            .executor(pool)
            .map("shout", p.items, (ctx, item) -> {
                assertFalse(Thread.currentThread().getName().startsWith("map-worker"), Thread.currentThread().getName());
                ctx.set(p.log, List.of(ctx.getNodeId() + ":" + item));
            }, MapOptions.maxConcurrency(2))
            .start("shout")
            .build();

        RunResult result = Trellis.runner(graph).invoke(Map.of("items", List.of("a", "b", "c", "d", "e")));

        assertEquals(List.of("shout:a", "shout:b", "shout:c", "shout:d", "shout:e"), result.getState().get(p.log));
    }

    @Test
    void aBlockingMapRunsOnTheExecutorAndWritesInTaskOrderNotCompletionOrder() throws Exception {
        CountDownLatch secondDone = new CountDownLatch(1);
        Graph graph = JavaGraph.builder("parent", p.schema)
            .executor(pool)
            .blockingMap("fetch", p.items, (ctx, item) -> {
                assertTrue(Thread.currentThread().getName().startsWith("map-worker"), Thread.currentThread().getName());
                if (item.equals("first")) Fixtures.await(secondDone, "the second task"); // ends after the second
                ctx.set(p.log, List.of(item));
                if (item.equals("second")) secondDone.countDown();
            }, MapOptions.maxConcurrency(2))
            .start("fetch")
            .build();

        RunResult result = Trellis.runner(graph).invoke(Map.of("items", List.of("first", "second", "third")));

        assertEquals(List.of("first", "second", "third"), result.getState().get(p.log));
    }

    @Test
    void aMapOfSubgraphsRunsAChildRunPerItem() throws Exception {
        Graph graph = JavaGraph.builder("parent", p.schema)
            .map("research", p.items, childGraph(), m -> m
                .input(in -> in.set(c.q, in.getItem() + "#" + in.getIndex()))
                .output((ctx, child) -> ctx.set(p.log, List.of(child.get(c.answer)))), MapOptions.maxConcurrency(1))
            .start("research")
            .build();

        List<RunEvent> events = events(Trellis.runner(graph), Map.of("items", List.of("x", "y")));

        assertEquals(
            List.of("research", "research[0]", "research[0]/ask", "research[0]/answer",
                "research[1]", "research[1]/ask", "research[1]/answer"),
            startedPaths(events));
        RunEvent.RunCompleted last = assertInstanceOf(RunEvent.RunCompleted.class, events.get(events.size() - 1));
        assertEquals(List.of("x#0!", "y#1!"), last.getResult().getState().get(p.log));
        assertEquals("y#1!", last.getResult().child("research[1]").getState().get(c.answer));
    }

    @Test
    void collectedTaskFailuresAreWrittenToTheErrorsKeyInTaskOrder() throws Exception {
        Graph graph = JavaGraph.builder("parent", p.schema)
            .map("check", p.items, (ctx, item) -> {
                if (item.startsWith("bad")) throw new IllegalStateException(item + " is bad");
                ctx.set(p.log, List.of(item));
            }, MapOptions.collectErrors(p.errors))
            .start("check")
            .build();

        RunResult result = Trellis.runner(graph).invoke(Map.of("items", List.of("ok1", "bad1", "ok2", "bad2")));

        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(List.of("ok1", "ok2"), result.getState().get(p.log));
        assertEquals(
            List.of(
                new TaskError(1, IllegalStateException.class.getName(), "bad1 is bad"),
                new TaskError(3, IllegalStateException.class.getName(), "bad2 is bad")),
            result.getState().get(p.errors));
    }

    @Test
    void aFailingTaskFailsTheMapWithItsOwnExceptionByDefault() throws Exception {
        IllegalStateException boom = new IllegalStateException("boom");
        Graph graph = JavaGraph.builder("parent", p.schema)
            .map("check", p.items, (ctx, item) -> {
                if (item.equals("bad")) throw boom;
            })
            .start("check")
            .build();

        GraphRunException e = assertThrows(GraphRunException.class,
            () -> Trellis.runner(graph).invoke(Map.of("items", List.of("ok", "bad"))));

        assertSame(boom, e.getCause());
    }

    @Test
    void retryAndTimeoutApplyToEachTask() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        Graph graph = JavaGraph.builder("parent", p.schema)
            .executor(pool)
            .blockingMap("fetch", p.items, (ctx, item) -> {
                attempts.incrementAndGet();
                if (item.equals("slow")) Thread.sleep(60_000); // interrupted by the timeout
                if (ctx.getAttempt() == 1) throw new IllegalStateException("flaky " + item);
                ctx.set(p.log, List.of(item + "@" + ctx.getAttempt()));
            }, MapOptions.collectErrors(p.errors)
                .withRetry(Retry.fixed(2, Duration.ZERO))
                .withTimeout(Duration.ofMillis(200))
                .withDescription("fetches"))
            .start("fetch")
            .build();

        RunResult result = Trellis.runner(graph).invoke(Map.of("items", List.of("a", "slow", "b")));

        assertEquals(List.of("a@2", "b@2"), result.getState().get(p.log));
        assertEquals(6, attempts.get()); // two attempts per task
        List<TaskError> errors = result.getState().get(p.errors);
        assertEquals(1, errors.size(), errors.toString());
        assertEquals(1, errors.get(0).getIndex());
        assertEquals(NodeTimeoutException.class.getName(), errors.get(0).getType());
        assertEquals("fetches", graph.getNodes().get(0).getDescription());
    }

    @Test
    void anInterruptInsideASubgraphIsAnsweredByItsPath() throws Exception {
        AtomicInteger asks = new AtomicInteger();
        Graph child = JavaGraph.builder("child", c.schema)
            .node("ask", ctx -> {
                asks.incrementAndGet();
                ctx.set(c.q, ctx.get(c.q) + "?");
            })
            .blockingNode("approve", ctx -> ctx.set(c.answer, ctx.interrupt("Publish " + ctx.get(c.q))))
            .start("ask")
            .edge("ask", "approve")
            .build();
        Graph graph = JavaGraph.builder("parent", p.schema)
            .subgraph("review", child, m -> m.input(p.question, c.q).output(c.answer, p.answer))
            .start("review")
            .build();
        JavaRunOptions settings = JavaRunOptions.builder().checkpointing(new Checkpointing(new InMemoryCheckpointStore())).build();
        TrellisRunner runner = Trellis.runner(graph, settings);

        RunResult paused = runner.invokeAsync(Map.of("question", "q")).get(10, TimeUnit.SECONDS);
        assertEquals(Status.INTERRUPTED, paused.getStatus());
        assertEquals("review/approve", paused.getInterrupts().get(0).getPath());
        assertEquals("Publish q?", paused.getInterrupts().get(0).getPayload());

        RunResult done = runner.resumeAsync(paused.getRunId(), Map.of("review/approve", "yes"))
            .get(10, TimeUnit.SECONDS);

        assertEquals(Status.COMPLETED, done.getStatus());
        assertEquals("yes", done.getState().get(p.answer));
        assertEquals(1, asks.get()); // only the interrupted child node ran again
    }

    @Test
    void theBuilderReportsEveryCompositionProblemAtOnce() throws Exception {
        Parent other = new Parent();
        JavaGraph.Builder builder = JavaGraph.builder("parent", p.schema)
            .subgraph("research", childGraph(), m -> m
                .input(c.q, c.q) // a child key on the parent side
                .input(in -> {})
                .input(in -> {})) // two input blocks
            .map("a", other.items, (ctx, item) -> {}) // a key of another schema
            .map("b", p.items, (ctx, item) -> {}, MapOptions.maxConcurrency(0))
            .map("c", p.items, (ctx, item) -> {}, MapOptions.DEFAULT.withErrors(p.errors)) // errors but fail fast
            .map("d", p.items, childGraph(), m -> m.output(p.answer, p.answer)) // a parent key on the child side
            .start("research");

        GraphValidationException e = assertThrows(GraphValidationException.class, builder::build);

        List<String> problems = e.getProblems();
        assertTrue(problems.stream().anyMatch(m -> m.contains("'research'") && m.contains("'q' of schema 'child'")), problems.toString());
        assertTrue(problems.stream().anyMatch(m -> m.contains("'research'") && m.contains("input { } twice")), problems.toString());
        assertTrue(problems.stream().anyMatch(m -> m.contains("'a'") && m.contains("maps over key 'items'")), problems.toString());
        assertTrue(problems.stream().anyMatch(m -> m.contains("'b'") && m.contains("maxConcurrency 0")), problems.toString());
        assertTrue(problems.stream().anyMatch(m -> m.contains("'c'") && m.contains("TaskFailure.COLLECT")), problems.toString());
        assertTrue(problems.stream().anyMatch(m -> m.contains("'d'") && m.contains("'answer' of schema 'parent'")), problems.toString());
    }

    @Test
    void mapOptionsAreImmutableValues() throws Exception {
        MapOptions base = MapOptions.maxConcurrency(4);
        MapOptions collecting = base.withTaskFailure(TaskFailure.COLLECT).withErrors(p.errors);

        assertNotSame(base, collecting);
        assertEquals(4, base.getMaxConcurrency());
        assertEquals(TaskFailure.FAIL_FAST, base.getTaskFailure());
        assertTrue(base.getErrors().isEmpty());
        assertEquals(TaskFailure.COLLECT, collecting.getTaskFailure());
        assertEquals(p.errors, collecting.getErrors().orElseThrow());
        assertEquals(collecting, MapOptions.collectErrors(p.errors).withMaxConcurrency(4));
        assertEquals(collecting.hashCode(), MapOptions.collectErrors(p.errors).withMaxConcurrency(4).hashCode());
        assertEquals(Integer.MAX_VALUE, MapOptions.DEFAULT.getMaxConcurrency());
        MapOptions full = MapOptions.DEFAULT.withRetry(Retry.NONE).withTimeout(Duration.ofSeconds(1)).withDescription("d");
        assertEquals(Retry.NONE, full.getRetry().orElseThrow());
        assertEquals(Duration.ofSeconds(1), full.getTimeout().orElseThrow());
        assertEquals("d", full.getDescription().orElseThrow());
        assertTrue(MapOptions.DEFAULT.getRetry().isEmpty());
    }

    /** The schemas of the example in docs/java.md. */
    private static final class Research {
        final StateSchema schema = new StateSchema("research");
        final StateKey<String> question = Keys.of(schema, "question", String.class, "");
        final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");
    }

    private static final class Plan {
        final StateSchema schema = new StateSchema("plan");
        final StateKey<String> topic = Keys.required(schema, "topic", String.class);
        final StateKey<String> summary = Keys.of(schema, "summary", String.class, "");
        final StateKey<List<String>> questions = Keys.appending(schema, "questions", String.class);
        final StateKey<List<String>> findings = Keys.appending(schema, "findings", String.class);
        final StateKey<List<String>> pages = Keys.appending(schema, "pages", String.class);
        final StateKey<List<TaskError>> errors = Keys.taskErrors(schema, "errors");
    }

    /** A stand-in for a blocking HTTP client. */
    private static final class Http {
        String get(String q) throws java.io.IOException {
            if (q.equals("down")) throw new java.io.IOException("unreachable");
            return "page of " + q;
        }
    }

    @Test
    void theDocsExampleRuns() throws Exception {
        Research r = new Research();
        Plan p = new Plan();
        Http http = new Http();
        // --- as in docs/java.md, "Subgraphs and maps"
        Graph research = JavaGraph.builder("research", r.schema)
            .node("answer", ctx -> ctx.set(r.answer, "about " + ctx.get(r.question)))
            .start("answer")
            .build();
        Graph plan = JavaGraph.builder("plan", p.schema)
            .subgraph("main", research, m -> m
                .input(p.topic, r.question)                                       // parent key -> child key
                .output(r.answer, p.summary))                                     // child key -> parent key
            .map("each", p.questions, research, m -> m
                .input(in -> in.set(r.question, in.getItem() + " #" + in.getIndex()))
                .output((ctx, child) -> ctx.set(p.findings, List.of(child.get(r.answer)))),
                MapOptions.maxConcurrency(4))
            .blockingMap("fetch", p.questions, (ctx, q) -> ctx.set(p.pages, List.of(http.get(q))),
                MapOptions.collectErrors(p.errors).withRetry(Retry.fixed(3, Duration.ofMillis(100))))
            .start("main")
            .edge("main", "each")
            .edge("each", "fetch")
            .build();
        // ---

        RunResult result = Trellis.runner(plan).invoke(Map.of("topic", "t", "questions", List.of("a", "down", "b")));

        assertEquals("about t", result.getState().get(p.summary));
        assertEquals(List.of("about a #0", "about down #1", "about b #2"), result.getState().get(p.findings));
        assertEquals(List.of("page of a", "page of b"), result.getState().get(p.pages));
        assertEquals(List.of(new TaskError(1, java.io.IOException.class.getName(), "unreachable")), result.getState().get(p.errors));
    }
}
