package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Edge;
import dev.trellis.graph.Graph;
import dev.trellis.graph.Retry;
import dev.trellis.graph.GraphValidationException;
import dev.trellis.graph.Reducer;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.LimitExceededException;
import dev.trellis.runtime.NodeTimeoutException;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.RunTimeoutException;
import dev.trellis.runtime.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import kotlinx.serialization.json.Json;
import org.junit.jupiter.api.Test;

class JavaGraphTest {
    private final Fixtures.Schema s = new Fixtures.Schema();

    private static final Map<String, Object> INPUT = Map.of("question", "q");

    @Test
    void buildsTheSameImmutableGraphModelAsTheKotlinDsl() {
        Graph graph = JavaGraph.builder("shape", s.schema)
            .node("a", ctx -> {}, NodeOptions.description("first").withTimeout(Duration.ofSeconds(5)))
            .asyncNode("b", ctx -> CompletableFuture.completedFuture(null), NodeOptions.retry(Retry.fixed(2, Duration.ofMillis(10))))
            .node("c", ctx -> {})
            .start("a")
            .edge("a", "b")
            .edge("a", "c", state -> true)
            .route("b", List.of("c", Graph.END), state -> "c")
            .maxNodeExecutions(7).executionTimeout(Duration.ofMinutes(1)).maxConcurrency(3).failFast(true)
            .defaultNodeTimeout(Duration.ofSeconds(9)).defaultRetry(Retry.exponential(2, Duration.ofMillis(1)))
            .build();
        assertEquals("shape", graph.getId());
        assertSame(s.schema, graph.getSchema());
        assertEquals(List.of("a", "b", "c"), graph.getNodes().stream().map(n -> n.getId()).toList());
        assertEquals(List.of("a"), graph.getEntryPoints());
        assertInstanceOf(Edge.Plain.class, graph.getEdges().get(0));
        assertInstanceOf(Edge.Conditional.class, graph.getEdges().get(1));
        assertEquals(List.of("c", Graph.END), graph.getEdges().get(2).getTargets());
        assertEquals("first", graph.node("a").getDescription());
        assertEquals(2, graph.node("b").getRetry().getMaxAttempts());
        assertEquals(7, graph.getConfig().getMaxNodeExecutions());
        assertEquals(3, graph.getConfig().getMaxConcurrency());
        assertTrue(graph.getConfig().getFailFast());
        assertTrue(graph.toMermaid().contains("route"));
    }

    @Test
    void buildReportsEveryProblemAtOnce() {
        GraphValidationException e = assertThrows(GraphValidationException.class, () -> JavaGraph.builder("bad", s.schema)
            .node("a", ctx -> {})
            .node("a", ctx -> {})
            .edge("a", "missing")
            .build());
        assertEquals(3, e.getProblems().size(), e.getMessage()); // duplicate id, unknown target, no entry point
    }

    @Test
    void aBuilderWithoutASchemaCreatesOne() throws Exception {
        JavaGraph.Builder builder = JavaGraph.builder("own");
        StateKey<Integer> n = Keys.of(builder.getSchema(), "n", Integer.class, 1);
        Graph graph = builder.node("double", ctx -> ctx.update(n, x -> x * 2)).start("double").build();
        assertEquals("own", graph.getSchema().getName());
        assertEquals(42, Trellis.runner(graph).invoke(Map.of("n", 21)).getState().get(n));
    }

    @Test
    void parallelBranchesOfBlockingNodesReallyOverlap() throws Exception {
        CyclicBarrier barrier = new CyclicBarrier(3); // three branches must all be running at once to pass it
        Graph graph = JavaGraph.builder("fan-out", s.schema)
            .node("split", ctx -> {})
            .blockingNode("a", ctx -> { barrier.await(10, TimeUnit.SECONDS); ctx.set(s.log, List.of("a")); })
            .blockingNode("b", ctx -> { barrier.await(10, TimeUnit.SECONDS); ctx.set(s.log, List.of("b")); })
            .asyncNode("c", ctx -> CompletableFuture.runAsync(() -> {
                try {
                    barrier.await(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }).thenRun(() -> ctx.set(s.log, List.of("c"))))
            .node("join", ctx -> ctx.set(s.log, List.of("join")))
            .start("split")
            .edge("split", "a").edge("split", "b").edge("split", "c")
            .edge("a", "join").edge("b", "join").edge("c", "join")
            .build();
        RunResult result = Trellis.runner(graph).invoke(INPUT, Duration.ofSeconds(30));
        List<String> log = result.getState().get(s.log);
        assertEquals(4, log.size());
        assertEquals("join", log.get(3));
        assertEquals(1, result.node("join").getExecutions());
    }

    @Test
    void maxConcurrencyKeepsBranchesApart() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        NodeAction work = ctx -> {
            most.accumulateAndGet(running.incrementAndGet(), Math::max);
            Thread.sleep(20);
            running.decrementAndGet();
        };
        Graph graph = JavaGraph.builder("narrow", s.schema)
            .node("split", ctx -> {}).blockingNode("a", work).blockingNode("b", work).blockingNode("c", work)
            .start("split").edge("split", "a").edge("split", "b").edge("split", "c")
            .maxConcurrency(1)
            .build();
        Trellis.runner(graph).invoke(INPUT);
        assertEquals(1, most.get());
    }

    @Test
    void aRouteMakesALoop() throws Exception {
        Graph graph = JavaGraph.builder("loop", s.schema)
            .node("inc", ctx -> {
                ctx.update(s.count, c -> c + 1);
                ctx.set(s.log, List.of(ctx.getNodeId() + ctx.getExecutionCount()));
            })
            .start("inc")
            .route("inc", List.of("inc", Graph.END), state -> state.get(s.count) < 5 ? "inc" : Graph.END)
            .build();
        RunResult result = Trellis.runner(graph).invoke(INPUT);
        assertEquals(5, result.getState().get(s.count));
        assertEquals(List.of("inc1", "inc2", "inc3", "inc4", "inc5"), result.getState().get(s.log));
        assertEquals(5, result.node("inc").getExecutions());
    }

    @Test
    void conditionalEdgesAreTakenWhenTheirPredicateHolds() throws Exception {
        Graph graph = JavaGraph.builder("choose", s.schema)
            .node("decide", ctx -> ctx.set(s.count, 2))
            .node("even", ctx -> ctx.set(s.log, List.of("even")))
            .node("odd", ctx -> ctx.set(s.log, List.of("odd")))
            .start("decide")
            .edge("decide", "even", state -> state.get(s.count) % 2 == 0)
            .edge("decide", "odd", state -> state.get(s.count) % 2 == 1)
            .build();
        RunResult result = Trellis.runner(graph).invoke(INPUT);
        assertEquals(List.of("even"), result.getState().get(s.log));
        assertEquals(Status.PENDING, result.node("odd").getStatus());
    }

    @Test
    void aRetryPolicyRetriesAFailingNodeWithAFreshAttempt() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        List<Integer> attempts = new java.util.concurrent.CopyOnWriteArrayList<>();
        Graph graph = JavaGraph.builder("flaky", s.schema)
            .node("flaky", ctx -> {
                attempts.add(ctx.getAttempt());
                ctx.set(s.log, List.of("attempt " + ctx.getAttempt()));
                if (calls.incrementAndGet() < 3) throw new java.io.IOException("flaky " + calls.get());
            }, NodeOptions.retry(Retry.exponential(3, Duration.ofMillis(5)).retryOn(e -> e instanceof java.io.IOException)))
            .start("flaky")
            .build();
        List<RunEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        RunResult result = Trellis.runner(graph).start(INPUT, events::add).result().get();
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(List.of(1, 2, 3), attempts);
        assertEquals(3, result.node("flaky").getAttempts());
        assertEquals(List.of("attempt 3"), result.getState().get(s.log), "failed attempts apply nothing");
        assertEquals(2, events.stream().filter(e -> e instanceof RunEvent.NodeRetrying).count());
    }

    @Test
    void errorsTheRetryPolicyRejectsAreNotRetried() {
        IllegalStateException fatal = new IllegalStateException("fatal");
        Graph graph = JavaGraph.builder("picky", s.schema)
            .node("n", ctx -> {
                throw fatal;
            }, NodeOptions.retry(Retry.fixed(5, Duration.ofMillis(1)).retryOn(e -> e instanceof java.io.IOException)))
            .start("n")
            .build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(graph).invoke(INPUT));
        assertSame(fatal, e.getCause());
        assertEquals(1, e.getResult().node("n").getAttempts());
    }

    @Test
    void limitsFailTheRunNamingTheLimit() {
        Graph runaway = JavaGraph.builder("runaway", s.schema)
            .node("spin", ctx -> {})
            .start("spin")
            .route("spin", List.of("spin", Graph.END), state -> "spin")
            .maxNodeExecutions(10)
            .build();
        LimitExceededException limit = assertInstanceOf(LimitExceededException.class,
            assertThrows(GraphRunException.class, () -> Trellis.runner(runaway).invoke(INPUT)).getCause());
        assertEquals("maxNodeExecutions", limit.getLimit());

        Graph slow = JavaGraph.builder("slow", s.schema)
            .blockingNode("sleep", ctx -> Thread.sleep(60_000))
            .start("sleep")
            .executionTimeout(Duration.ofMillis(100))
            .build();
        RunTimeoutException timeout = assertInstanceOf(RunTimeoutException.class,
            assertThrows(GraphRunException.class, () -> Trellis.runner(slow).invoke(INPUT)).getCause());
        assertEquals(Duration.ofMillis(100), timeout.getTimeout());

        Graph slowNode = JavaGraph.builder("slow-node", s.schema)
            .blockingNode("sleep", ctx -> Thread.sleep(60_000), NodeOptions.timeout(Duration.ofMillis(100)))
            .start("sleep")
            .build();
        NodeTimeoutException nodeTimeout = assertInstanceOf(NodeTimeoutException.class,
            assertThrows(GraphRunException.class, () -> Trellis.runner(slowNode).invoke(INPUT)).getCause());
        assertEquals("sleep", nodeTimeout.getNodeId());

        Graph defaultTimeout = JavaGraph.builder("default-timeout", s.schema)
            .blockingNode("sleep", ctx -> Thread.sleep(60_000))
            .start("sleep")
            .defaultNodeTimeout(Duration.ofMillis(100))
            .build();
        assertInstanceOf(NodeTimeoutException.class,
            assertThrows(GraphRunException.class, () -> Trellis.runner(defaultTimeout).invoke(INPUT)).getCause());
    }

    @Test
    void failFastCancelsTheNodesStillRunning() throws Exception {
        java.util.concurrent.CountDownLatch sleeping = new java.util.concurrent.CountDownLatch(1);
        Graph graph = JavaGraph.builder("fail-fast", s.schema)
            .node("split", ctx -> {})
            .blockingNode("sleeper", ctx -> { sleeping.countDown(); Thread.sleep(60_000); })
            .blockingNode("failer", ctx -> { Fixtures.await(sleeping, "sleeper"); throw new IllegalStateException("fail"); })
            .start("split").edge("split", "sleeper").edge("split", "failer")
            .failFast(true)
            .defaultRetry(Retry.NONE)
            .build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(graph).invoke(INPUT, Duration.ofSeconds(30)));
        assertEquals(Status.CANCELLED, e.getResult().node("sleeper").getStatus());
    }

    @Test
    void theNodeContextAdaptsTheNodeScope() throws Exception {
        AtomicReference<String> seen = new AtomicReference<>();
        Graph graph = JavaGraph.builder("context", s.schema)
            .node("look", ctx -> {
                ctx.set(s.log, List.of("mine"));
                ctx.set(s.count, 5);
                seen.set(ctx.getRunId() + "|" + ctx.getNodeId() + "|" + ctx.getAttempt() + "|" + ctx.getExecutionCount() + "|"
                    + ctx.get(s.question) + "|" + ctx.get(s.log) + "|" + ctx.getState().get(s.log) + "|" + ctx.get(s.count));
                ctx.emit("hello");
                assertTrue(ctx.toString().contains("look#1"));
            })
            .start("look")
            .build();
        RunResult result = Trellis.runner(graph, JavaRunOptions.builder().runId("run-7").build()).invoke(INPUT);
        assertEquals("run-7|look|1|1|q|[mine]|[]|5", seen.get());
        assertEquals("run-7", result.getRunId());
    }

    @Test
    void blockingNodesRunOnTheConfiguredExecutor() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2, r -> new Thread(r, "my-pool"));
        try {
            AtomicReference<String> thread = new AtomicReference<>();
            Graph graph = JavaGraph.builder("pooled", s.schema)
                .executor(pool)
                .blockingNode("where", ctx -> thread.set(Thread.currentThread().getName()))
                .start("where")
                .build();
            Trellis.runner(graph).invoke(INPUT);
            assertTrue(thread.get().startsWith("my-pool"), thread.get()); // debug mode appends the coroutine name
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void blockingNodesRunOnVirtualThreadsOrTheDefaultPool() throws Exception {
        AtomicReference<Thread> thread = new AtomicReference<>();
        Graph graph = JavaGraph.builder("default", s.schema)
            .blockingNode("where", ctx -> thread.set(Thread.currentThread()))
            .start("where")
            .build();
        Trellis.runner(graph).invoke(INPUT);
        boolean virtualThreadsExist = Runtime.version().feature() >= 21;
        if (virtualThreadsExist) {
            assertTrue((Boolean) Thread.class.getMethod("isVirtual").invoke(thread.get()));
        } else {
            assertTrue(thread.get().getName().startsWith("trellis-node-"), thread.get().getName());
            assertTrue(thread.get().isDaemon());
        }
    }

    @Test
    void aNullStageFailsTheNodeWithAClearMessage() {
        Graph graph = JavaGraph.builder("null", s.schema).asyncNode("nothing", ctx -> null).start("nothing").build();
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(graph).invoke(INPUT));
        assertTrue(e.getCause().getMessage().contains("Async node 'nothing' returned null"), e.getCause().getMessage());
    }

    record Order(String id, Optional<String> note) {}

    enum Colour { RED, GREEN }

    @Test
    void keysDeclareTypedStateWithJacksonCodecs() throws Exception {
        StateSchema schema = new StateSchema("keys");
        StateKey<String> url = Keys.required(schema, "url", String.class);
        StateKey<List<Order>> orders = JacksonKeys.required(schema, "orders", new tools.jackson.core.type.TypeReference<List<Order>>() {});
        StateKey<Map<String, Integer>> tally = JacksonKeys.of(schema, "tally", new tools.jackson.core.type.TypeReference<Map<String, Integer>>() {}, Map.of());
        StateKey<Colour> colour = Keys.nullable(schema, "colour", Colour.class);
        StateKey<Integer> total = Keys.reducing(schema, "total", Integer.class, 0, Reducer.sum());
        StateKey<Map<String, String>> tags = Keys.merging(schema, "tags", String.class, String.class);
        StateKey<List<String>> notes = Keys.appending(schema, "notes", String.class);

        Graph graph = JavaGraph.builder("keys", schema)
            .node("split", ctx -> ctx.set(colour, Colour.RED))
            .node("a", ctx -> { ctx.set(total, 2); ctx.set(tags, Map.of("a", "1")); ctx.set(notes, List.of("a")); })
            .node("b", ctx -> { ctx.set(total, 3); ctx.set(tags, Map.of("b", "2")); ctx.set(notes, List.of("b")); })
            .start("split").edge("split", "a").edge("split", "b")
            .build();
        Order order = new Order("1", Optional.of("fragile"));
        RunResult result = Trellis.runner(graph).invoke(Map.of("url", "https://example.invalid", "orders", List.of(order)));
        assertEquals(5, result.getState().get(total));
        assertEquals(Map.of("a", "1", "b", "2"), result.getState().get(tags));
        assertEquals(2, result.getState().get(notes).size());
        assertEquals(Colour.RED, result.getState().get(colour));
        assertEquals(Map.of(), result.getState().get(tally));
        assertEquals("java.util.List<dev.trellis.javaapi.JavaGraphTest$Order>", orders.getTypeName());
        assertFalse(url.getHasDefault());

        // every value can be checkpointed through its key's serializer
        String json = Json.Default.encodeToString(orders.getSerializer(), result.getState().get(orders));
        assertEquals(List.of(order), Json.Default.decodeFromString(orders.getSerializer(), json));
        String notesJson = Json.Default.encodeToString(notes.getSerializer(), result.getState().get(notes));
        assertEquals(result.getState().get(notes), Json.Default.decodeFromString(notes.getSerializer(), notesJson));
        assertNull(Json.Default.decodeFromString(colour.getSerializer(), Json.Default.encodeToString(colour.getSerializer(), null)));
    }

    @Test
    void retryPoliciesAndNodeOptionsAreValues() {
        Retry policy = Retry.exponential(4, Duration.ofMillis(100), 3.0, Duration.ofSeconds(2)).withJitter(0.5);
        assertEquals(4, policy.getMaxAttempts());
        assertEquals(Duration.ofMillis(100), policy.getInitialDelay());
        assertEquals(Duration.ofSeconds(2), policy.getMaxDelay());
        assertEquals(Duration.ofSeconds(1), policy.withMaxDelay(Duration.ofSeconds(1)).getMaxDelay());
        assertEquals(0.5, policy.getJitter());
        assertEquals(Retry.Backoff.LINEAR, Retry.linear(3, Duration.ofMillis(10), Duration.ofSeconds(1)).getBackoff());
        Retry fixed = Retry.fixed(2, Duration.ofMillis(10)).retryOn(e -> e instanceof java.io.IOException);
        assertEquals(Duration.ofMillis(10), fixed.getMaxDelay());
        assertTrue(fixed.shouldRetry(new java.io.IOException("down"), 1));
        assertFalse(fixed.shouldRetry(new IllegalStateException("bug"), 1));
        assertEquals(1, Retry.NONE.getMaxAttempts());

        NodeOptions options = NodeOptions.timeout(Duration.ofSeconds(1)).withRetry(policy).withDescription("d");
        assertEquals(Optional.of(Duration.ofSeconds(1)), options.getTimeout());
        assertSame(policy, options.getRetry().orElseThrow());
        assertEquals(Optional.of("d"), options.getDescription());
        assertEquals(options, NodeOptions.DEFAULT.withTimeout(Duration.ofSeconds(1)).withRetry(policy).withDescription("d"));
        assertEquals(Optional.empty(), NodeOptions.DEFAULT.getRetry());
        assertEquals(Optional.empty(), NodeOptions.DEFAULT.getTimeout());
        assertEquals(Optional.empty(), NodeOptions.DEFAULT.getDescription());
    }
}
