package dev.trellis.samples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import tools.jackson.core.type.TypeReference;
import dev.trellis.checkpoint.CheckpointRecord;
import dev.trellis.checkpoint.CheckpointStore;
import dev.trellis.checkpoint.Lease;
import dev.trellis.checkpoint.RunInfo;
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.Reducer;
import dev.trellis.graph.State;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.AsyncAgent;
import dev.trellis.javaapi.AsyncAgentScope;
import dev.trellis.javaapi.AsyncCheckpointStore;
import dev.trellis.javaapi.Failures;
import dev.trellis.javaapi.JavaNodeInterceptor;
import dev.trellis.javaapi.JacksonKeys;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.NodeOptions;
import dev.trellis.graph.Retry;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.JavaRunHandle;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.opentelemetry.TrellisTelemetry;
import dev.trellis.runtime.CheckpointInfo;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunControl;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.RunSnapshot;
import dev.trellis.runtime.Status;
import dev.trellis.runtime.agent.AgentInput;
import dev.trellis.runtime.agent.AgentSnapshot;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The examples of {@code docs/java.md}, as the guide shows them, run and checked. */
class JavaGuideTest {
    /** A structured verdict and an order: values of Jackson keys. */
    public record Verdict(boolean approved, String reason) {}

    public record Order(String id, int quantity) {}

    /** What the examples log, to be read by the tests. */
    static final class Log {
        final List<String> lines = new CopyOnWriteArrayList<>();

        void info(String format, Object... args) {
            String line = format;
            for (Object arg : args) line = line.replaceFirst("\\{}", java.util.regex.Matcher.quoteReplacement(String.valueOf(arg)));
            lines.add(line);
        }

        void error(String message, Throwable error) {
            lines.add(message + ": " + error);
        }
    }

    private final Log log = new Log();
    private final Log audit = new Log();
    private final List<IOException> retried = new CopyOnWriteArrayList<>();

    @TempDir
    Path dir;

    @BeforeEach
    @AfterEach
    void removeTheGuidesDatabase() throws Exception {
        for (String suffix : List.of("", "-wal", "-shm")) Files.deleteIfExists(Path.of("runs.db" + suffix));
    }

    private String download(String url) {
        return "page of " + url;
    }

    /** An embedding service with an asynchronous client. */
    static final class Embedder {
        CompletionStage<List<Double>> embedAsync(List<String> texts) {
            return CompletableFuture.supplyAsync(() -> List.of((double) texts.size()));
        }
    }

    private final Embedder embedder = new Embedder();

    private List<String> redact(List<String> notes) {
        return notes.stream().map(n -> n.replace("secret", "***")).toList();
    }

    private void retryLater(IOException error) {
        retried.add(error);
    }

    @Test
    void keysAndAGraphOfTheThreeKindsOfNodesRunToTheLimitOfTheRoute() throws Exception {
        StateSchema schema = new StateSchema("ingest");
        StateKey<String> url = Keys.required(schema, "url", String.class);               // input must give it
        StateKey<Integer> count = Keys.of(schema, "count", Integer.class, 0);             // default 0
        StateKey<List<String>> notes = Keys.appending(schema, "notes", String.class);     // writes are appended
        StateKey<Map<String, Integer>> tally = Keys.merging(schema, "tally", String.class, Integer.class);
        StateKey<Integer> total = Keys.reducing(schema, "total", Integer.class, 0, Reducer.sum());
        StateKey<Verdict> verdict = Keys.nullable(schema, "verdict", Verdict.class);      // null by default
        StateKey<List<Order>> orders = JacksonKeys.required(schema, "orders", new TypeReference<List<Order>>() {});
        StateKey<List<Double>> vector = JacksonKeys.of(schema, "vector", new TypeReference<List<Double>>() {}, List.of());

        Graph graph = JavaGraph.builder("ingest", schema)
            .blockingNode("fetch", ctx -> ctx.set(notes, List.of(download(ctx.get(url)))))   // blocks: on the executor
            .asyncNode("embed", ctx -> embedder.embedAsync(ctx.get(notes)).thenAccept(v -> ctx.set(vector, v)))
            .node("count", ctx -> ctx.update(count, c -> c + 1),                              // quick: inline
                NodeOptions.retry(Retry.exponential(3, Duration.ofMillis(200))).withTimeout(Duration.ofSeconds(30)))
            .start("fetch")
            .edge("fetch", "embed")
            .edge("embed", "count")
            .route("count", List.of("fetch", Graph.END), state -> state.get(count) < 3 ? "fetch" : Graph.END)
            .maxNodeExecutions(100)
            .executionTimeout(Duration.ofMinutes(5))
            .build();

        RunResult result = Trellis.runner(graph)
            .invoke(Map.of("url", "https://example.com", "orders", List.of(new Order("o-1", 2))));
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals(3, result.getState().get(count));
        assertEquals(3, result.getState().get(notes).size());
        assertEquals(List.of(3.0), result.getState().get(vector));
        assertEquals(Map.of(), result.getState().get(tally));
        assertEquals(0, result.getState().get(total));
        assertEquals(null, result.getState().get(verdict));
        assertEquals(List.of(new Order("o-1", 2)), result.getState().get(orders));
    }

    /** A blocking chat client the reviewer calls on its own pool. */
    static final class Model {
        String chat(List<String> conversation) {
            return "approved after " + conversation.size() + " message(s)";
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void anAsyncAgentKeepsItsConversationPerRun() throws Exception {
        StateSchema schema = new StateSchema("review");
        StateKey<String> draft = Keys.of(schema, "draft", String.class, "a draft");
        StateKey<String> verdict = Keys.of(schema, "verdict", String.class, "");
        JavaGraph.Builder builder = JavaGraph.builder("review", schema);
        Model model = new Model();
        ExecutorService modelPool = Executors.newFixedThreadPool(2);

        class Reviewer implements AsyncAgent {
            private final List<String> conversation = new ArrayList<>();

            public CompletionStage<String> call(AgentInput input, AsyncAgentScope scope) {
                conversation.add(input.getPrompt());
                scope.step("reviewing " + input.getNodeId());
                return CompletableFuture.supplyAsync(() -> model.chat(conversation), modelPool);  // blocking client, own pool
            }
            public Optional<AgentSnapshot> snapshot() { return Optional.of(new AgentSnapshot(List.copyOf(conversation))); }
            public void restore(AgentSnapshot s) { conversation.clear(); conversation.addAll((List<String>) s.getValue()); }
        }

        builder.agentNode("review", new Reviewer(), verdict, state -> "Review: " + state.get(draft));
        Graph graph = builder.start("review").build();
        TrellisRunner runner = Trellis.runner(graph);
        // Each run starts from the conversation as it was before: one message each time.
        assertEquals("approved after 1 message(s)", runner.invoke(Map.of()).getState().get(verdict));
        assertEquals("approved after 1 message(s)", runner.invoke(Map.of()).getState().get(verdict));
        modelPool.shutdown();
    }

    @Test
    void interceptorsWrapTheNodesOfAGraphOneNodeAndEveryRun() throws Exception {
        StateSchema schema = new StateSchema("research");
        StateKey<List<String>> notes = Keys.appending(schema, "notes", String.class);
        JavaGraph.Builder builder = JavaGraph.builder("research", schema)
            .node("search", ctx -> ctx.set(notes, List.of("the secret is out")))
            .node("write", ctx -> ctx.set(notes, List.of("written")))
            .start("search")
            .edge("search", "write");

        JavaNodeInterceptor timing = chain -> {
            long started = System.nanoTime();
            try {
                return chain.proceed();                       // the node's writes, as NodeWrites
            } finally {
                log.info(chain.getNodeId() + " attempt " + chain.getAttempt() + ": " + (System.nanoTime() - started) + " ns");
            }
        };
        builder.intercept(timing)                                          // every node of the graph
               .intercept("search", chain -> chain.proceed().map(notes, n -> redact(n)));  // one node
        JavaRunOptions settings = JavaRunOptions.builder().intercept(timing).build();           // every node of every run

        RunResult result = Trellis.runner(builder.build(), settings).invoke(Map.of());
        assertEquals(List.of("the *** is out", "written"), result.getState().get(notes));
        // Twice per node: once by the run's interceptor, once by the graph's.
        assertEquals(4, log.lines.size(), log.lines.toString());
        assertTrue(log.lines.get(0).startsWith("search attempt 1: "), log.lines.toString());
    }

    @Test
    void aRunnerInvokesAwaitsPublishesAndCancels() throws Exception {
        StateSchema schema = new StateSchema("ingest");
        StateKey<String> url = Keys.required(schema, "url", String.class);
        StateKey<String> page = Keys.of(schema, "page", String.class, "");
        Semaphore gate = new Semaphore(1); // one "slow" run may pass; the next waits until it is cancelled
        Graph graph = JavaGraph.builder("ingest", schema)
            .blockingNode("fetch", ctx -> {
                if (ctx.get(url).equals("slow")) gate.acquire();
                ctx.set(page, download(ctx.get(url)));
            })
            .start("fetch")
            .build();
        Map<String, Object> input = Map.of("url", "slow");

        TrellisRunner runner = Trellis.runner(graph);
        RunResult result = runner.invoke(Map.of("url", "https://example.com"));              // blocking, on this thread
        RunResult quick = runner.invoke(input, Duration.ofSeconds(30));                       // TimeoutException
        CompletableFuture<RunResult> done = runner.invokeAsync(Map.of("url", "https://example.com"));
        Flow.Publisher<RunEvent> events = runner.events(input);                               // JDK Flow
        org.reactivestreams.Publisher<RunEvent> rs = runner.reactiveEvents(input);            // Reactor, RxJava, Mutiny
        JavaRunHandle run = runner.start(input, event -> log.info("{}", event));                 // callbacks
        run.cancel();
        RunResult cancelled = run.result().join();                                            // status CANCELLED

        assertEquals("page of https://example.com", result.getState().get(page));
        assertEquals(Status.COMPLETED, quick.getStatus());
        assertEquals(Status.COMPLETED, done.join().getStatus());
        assertNotNull(events);
        assertNotNull(rs);
        assertEquals(Status.CANCELLED, cancelled.getStatus());
        assertTrue(log.lines.stream().anyMatch(line -> line.startsWith("RunCancelled(")), log.lines.toString());
    }

    @Test
    void persistenceFromJavaPausesResumesListsForksAndSnapshots() throws Exception {
        StateSchema schema = new StateSchema("publish");
        StateKey<String> title = Keys.required(schema, "title", String.class);
        StateKey<Boolean> approved = Keys.of(schema, "approved", Boolean.class, false);
        StateKey<String> tone = Keys.of(schema, "tone", String.class, "plain");
        Graph graph = JavaGraph.builder("publish", schema)
            .node("approve", ctx -> {
                String answer = ctx.interrupt("Publish " + ctx.get(title) + "? (yes/no)");
                ctx.set(approved, answer.equals("yes"));
            })
            .start("approve")
            .build();
        Map<String, Object> input = Map.of("title", "Notes");
        JavaGraph.Builder builder = JavaGraph.builder("publish", schema);
        String runId;
        try (SqliteCheckpointStore before = new SqliteCheckpointStore(Path.of("runs.db"))) {
            TrellisRunner first = Trellis.runner(graph, JavaRunOptions.builder().checkpointing(new Checkpointing(before)).build());
            runId = first.invoke(input).getRunId();
            first.resumeAsync(runId, "no").join();
        }
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        Flow.Subscriber<RunEvent> subscriber = new Flow.Subscriber<>() {
            public void onSubscribe(Flow.Subscription subscription) { subscription.request(Long.MAX_VALUE); }
            public void onNext(RunEvent event) {}
            public void onError(Throwable error) { errors.add(error); }
            public void onComplete() {}
        };

        CheckpointStore store = new SqliteCheckpointStore(Path.of("runs.db"));  // or InMemoryCheckpointStore, PostgresCheckpointStore(dataSource)
        RunControl control = new RunControl();
        control.drainOnShutdown();                                               // SIGTERM: drain, checkpoint, end INTERRUPTED
        TrellisRunner runner = Trellis.runner(graph,
            JavaRunOptions.builder().checkpointing(new Checkpointing(store)).control(control).build());

        // A node asks a human: the first time, ctx.interrupt(...) ends the run INTERRUPTED (let it propagate).
        builder.node("approve", ctx -> {
            String answer = ctx.interrupt("Publish " + ctx.get(title) + "? (yes/no)");
            ctx.set(approved, answer.equals("yes"));
        });

        RunResult paused = runner.invokeAsync(input).join();                     // status INTERRUPTED
        paused.getInterrupts();                                                  // [Interrupt(approve: Publish ...?)]
        RunResult done = runner.resumeAsync(paused.getRunId(), "yes").join();    // the single pending interrupt
        runner.resumeAsync(runId, Map.of("approve", "yes"));                     // answers by node id
        runner.resumeAsync(runId);                                               // after a crash or a drain
        runner.retryAsync(runId);                                                // a FAILED run, from before its failure
        runner.resumeEvents(runId, "yes").subscribe(subscriber);                 // the continuation's events (Flow.Publisher)

        List<CheckpointInfo> history = runner.checkpointsAsync(runId).join();    // oldest first
        State then = runner.stateAtAsync(runId, history.get(0).getSequence()).join();
        RunResult fork = runner.forkAsync(runId, history.get(0).getSequence(),   // a new run; the original is untouched
            state -> state.with(tone, "formal")).join();

        RunSnapshot snapshot = runner.takeSnapshotAsync(runId).join();           // latest checkpoint, resumable
        String json = snapshot.toJson();                                         // store it anywhere
        RunResult later = runner.resumeAsync(runner.loadSnapshot(json)).join();  // a new run; needs no store

        assertEquals(Status.INTERRUPTED, paused.getStatus());
        assertEquals("Publish Notes? (yes/no)", paused.getInterrupts().get(0).getPayload());
        assertEquals(true, done.getState().get(approved));
        assertEquals(false, then.get(approved));
        assertEquals(Status.INTERRUPTED, fork.getStatus());
        assertEquals("formal", fork.getState().get(tone));
        assertNotNull(later.getStatus());
        assertNotNull(builder.start("approve").build());
        // resumeEvents(runId, "yes") of the run that ended: the stream ends with the runtime's IllegalStateException
        // ("already ended COMPLETED ... fork it"), as docs/java.md says for every resume of an ended run.
        // Awaited before the run is deleted below.
        for (int i = 0; i < 400 && errors.isEmpty(); i++) Thread.sleep(50);
        IllegalStateException ended = assertInstanceOf(IllegalStateException.class, errors.isEmpty() ? null : errors.get(0));
        assertTrue(ended.getMessage().contains("already ended COMPLETED"), ended.getMessage());

        List<RunInfo> runs = runner.runsAsync().join();          // this graph's runs: id, latest sequence and status, lease
        int deleted = runner.pruneAsync(runId, 1).join();        // keep the newest checkpoint (and what it needs)
        runner.deleteAsync(runId).join();                        // the run and all its checkpoints; its id is free again

        assertTrue(runs.stream().anyMatch(info -> info.getRunId().equals(runId)));
        assertTrue(deleted > 0);
        assertTrue(runner.checkpointsAsync(runId).join().isEmpty());
        store.close();
    }

    @Test
    void aStoreWrittenInJavaDecoratesABuiltInOne() throws Exception {
        StateSchema schema = new StateSchema("count");
        StateKey<Integer> count = Keys.of(schema, "count", Integer.class, 0);
        Graph graph = JavaGraph.builder("count", schema).node("add", ctx -> ctx.update(count, c -> c + 1)).start("add").build();
        Path path = dir.resolve("audited.db");

        class AuditedStore implements AsyncCheckpointStore {
            private final AsyncCheckpointStore inner = AsyncCheckpointStore.of(new SqliteCheckpointStore(path));

            public CompletionStage<Void> append(Lease lease, CheckpointRecord record) {
                audit.info("run {} checkpoint {} {}", record.getRunId(), record.getSequence(), record.getStatus());
                return inner.append(lease, record);
            }
            public CompletionStage<Lease> claim(String runId, String owner) { return inner.claim(runId, owner); }
            public CompletionStage<Lease> renew(Lease lease) { return inner.renew(lease); }
            public CompletionStage<Void> release(Lease lease) { return inner.release(lease); }
            public CompletionStage<Optional<CheckpointRecord>> latest(String runId) { return inner.latest(runId); }
            public CompletionStage<Optional<CheckpointRecord>> get(String runId, long seq) { return inner.get(runId, seq); }
            public CompletionStage<List<CheckpointRecord>> history(String runId) { return inner.history(runId); }
            public CompletionStage<List<RunInfo>> runs() { return inner.runs(); }
            public CompletionStage<Integer> prune(String runId, int keep) { return inner.prune(runId, keep); }
            public CompletionStage<Void> delete(String runId) { return inner.delete(runId); }
        }

        TrellisRunner runner = Trellis.runner(graph,
            JavaRunOptions.builder().checkpointing(new Checkpointing(new AuditedStore().asCheckpointStore())).build());
        RunResult result = runner.invoke(Map.of());
        assertEquals(1, result.getState().get(count));
        assertTrue(audit.lines.get(0).startsWith("run " + result.getRunId() + " checkpoint 1 RUNNING"), audit.lines.toString());
        assertTrue(audit.lines.get(audit.lines.size() - 1).endsWith("COMPLETED"), audit.lines.toString());
    }

    @Test
    void aRunnerWithTelemetryTracesItsRunsWithAnyStore() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetry openTelemetry = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
            .build();
        StateSchema schema = new StateSchema("count");
        StateKey<Integer> count = Keys.of(schema, "count", Integer.class, 0);
        Graph graph = JavaGraph.builder("count", schema).node("add", ctx -> ctx.update(count, c -> c + 1)).start("add").build();
        Path path = dir.resolve("traced.db");
        Map<String, Object> input = Map.of();

        TrellisTelemetry telemetry = new TrellisTelemetry(openTelemetry);   // e.g. AutoConfiguredOpenTelemetrySdk
        JavaRunOptions settings = JavaRunOptions.builder()
            .checkpointing(new Checkpointing(telemetry.instrument(new SqliteCheckpointStore(path))))
            .instrumentation(telemetry)
            .build();
        RunResult result = Trellis.runner(graph, settings).invoke(input);   // traced

        assertEquals(Status.COMPLETED, result.getStatus());
        assertTrue(exporter.getFinishedSpanItems().stream().anyMatch(span -> span.getName().equals("trellis.run count")));
        assertTrue(exporter.getFinishedSpanItems().stream().anyMatch(span -> span.getName().equals("trellis.node add")));
    }

    @Test
    void failuresGiveTheNodesOwnExceptionAndTheRunsResult() throws Exception {
        StateSchema schema = new StateSchema("fetch");
        Graph graph = JavaGraph.builder("fetch", schema)
            .blockingNode("fetch", ctx -> { throw new IOException("connection reset"); })
            .start("fetch")
            .build();
        TrellisRunner runner = Trellis.runner(graph);
        Map<String, Object> input = Map.of();

        try {
            RunResult result = runner.invokeAsync(input).join();
        } catch (CompletionException e) {
            Throwable error = Failures.cause(e);                  // e.g. the IOException your node threw
            Optional<RunResult> failed = Failures.result(e);      // state, per-node results, every error
            if (error instanceof IOException io) retryLater(io);
        }

        runner.invokeAsync(input)
            .exceptionally(e -> { log.error("run failed", Failures.cause(e)); return null; });
        for (int i = 0; i < 400 && log.lines.isEmpty(); i++) Thread.sleep(50);
        assertEquals("connection reset", retried.get(0).getMessage());
        assertEquals(List.of("run failed: java.io.IOException: connection reset"), log.lines);
        assertThrows(CompletionException.class, () -> runner.invokeAsync(input).join());
        assertFalse(retried.isEmpty());
    }
}
