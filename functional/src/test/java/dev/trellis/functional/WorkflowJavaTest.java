package dev.trellis.functional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.checkpoint.CheckpointStore;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.Budget;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.RunEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Functional workflows written and run from Java: lambdas, blocking tasks, futures, interrupts, policies, budgets. */
class WorkflowJavaTest {
    // --8<-- [start:java-report]
    record Plan(List<String> sections) {}

    static final Workflow<String, String> REPORT = Workflow.define("report", String.class, String.class, (flow, topic) -> {
        Plan plan = flow.task("plan", Plan.class, () -> new Plan(List.of(topic + ": causes", topic + ": effects")));
        List<CompletableFuture<String>> parts = new ArrayList<>();
        for (String section : plan.sections()) {
            parts.add(flow.taskAsync("search", String.class, () -> "findings on " + section)); // in parallel
        }
        String joined = parts.stream().map(CompletableFuture::join).collect(Collectors.joining("; ")); // call order
        return flow.task("write", String.class, () -> joined);
    });

    static String write(CheckpointStore store) {
        return REPORT.runAsync("the sky", store, "report-42").join(); // the same call resumes run report-42
    }
    // --8<-- [end:java-report]

    // --8<-- [start:java-approval]
    static final Workflow<String, String> APPROVAL = Workflow.define("approval", String.class, String.class, (flow, draft) -> {
        String checked = flow.task("check", String.class, draft::trim);
        String answer = flow.interrupt("Publish '" + checked + "'? (yes/no)"); // the run pauses here
        return flow.task("publish", String.class, () -> answer.equals("yes") ? "published " + checked : "kept " + checked);
    });

    static String approve(CheckpointStore store) {
        try {
            return APPROVAL.runAsync(" draft 7 ", store, "approval-1").join();
        } catch (CompletionException e) {
            WorkflowInterruptedException paused = (WorkflowInterruptedException) e.getCause();
            System.out.println(paused.getPayload()); // Publish 'draft 7'? (yes/no)
            return APPROVAL.resumeAsync("approval-1", store, "yes").join(); // "check" does not run again
        }
    }
    // --8<-- [end:java-approval]

    // --8<-- [start:java-publisher]
    static final StateSchema ASK = new StateSchema("ask");
    static final StateKey<String> TOPIC = Keys.required(ASK, "topic", String.class);
    static final StateKey<String> DRAFT_TEXT = Keys.of(ASK, "draft", String.class, "");
    static final StateKey<String> VERDICT = Keys.of(ASK, "verdict", String.class, "");

    static final Graph ASKING = JavaGraph.builder("asking", ASK)
        .node("draft", ctx -> ctx.set(DRAFT_TEXT, "the draft on " + ctx.get(TOPIC)))
        .node("approve", ctx -> ctx.set(VERDICT, ctx.interrupt("Publish " + ctx.get(DRAFT_TEXT) + "?")))
        .start("draft")
        .edge("draft", "approve")
        .edge("approve", Graph.END)
        .build();

    static final Workflow<String, String> PUBLISHER = Workflow.define("publisher", String.class, String.class, (flow, topic) -> {
        String verdict = flow.graphTask("ask", ASKING, ASK.stateOf(Map.of("topic", topic)), VERDICT); // may pause
        return flow.task("publish", String.class, () -> verdict.equals("yes") ? "published " + topic : "kept " + topic);
    });

    static String publish(CheckpointStore store) {
        try {
            return PUBLISHER.runAsync("tides", store, "publish-1").join();
        } catch (CompletionException e) {
            WorkflowInterruptedException paused = (WorkflowInterruptedException) e.getCause();
            System.out.println(paused.getPayload()); // the child graph's question
            return PUBLISHER.resumeAsync("publish-1", store, "yes").join(); // the child resumes where it stopped
        }
    }
    // --8<-- [end:java-publisher]

    // --8<-- [start:java-review]
    static final StateSchema DOC = new StateSchema("doc");
    static final StateKey<String> DRAFT = Keys.required(DOC, "draft", String.class);
    static final StateKey<String> OUTCOME = Keys.of(DOC, "outcome", String.class, "");

    static Graph reviewGraph(CheckpointStore store) {
        return JavaGraph.builder("review", DOC)
            .blockingNode("review", WorkflowActions.node(APPROVAL, store, OUTCOME, state -> state.get(DRAFT)))
            .start("review")
            .edge("review", Graph.END)
            .build();
    }
    // --8<-- [end:java-review]

    private final Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();

    private int count(String name) {
        AtomicInteger n = ran.get(name);
        return n == null ? 0 : n.get();
    }

    private int ran(String name) {
        return ran.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
    }

    @Test
    void theDocExampleRunsAndACompletedRunReturnsItsOutput() {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        assertEquals("findings on the sky: causes; findings on the sky: effects", write(store));
        assertEquals("findings on the sky: causes; findings on the sky: effects", write(store));
    }

    @Test
    void theCompositionExamplesRun() throws Exception {
        assertEquals("published tides", publish(new InMemoryCheckpointStore()));
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        TrellisRunner runner = Trellis.runner(
            reviewGraph(store), JavaRunOptions.builder().checkpointing(new Checkpointing(store)).runId("review-1").build());
        RunResult paused = runner.invokeAsync(Map.of("draft", " d ")).get(60, TimeUnit.SECONDS);
        assertEquals("Publish 'd'? (yes/no)", paused.getInterrupts().get(0).getPayload());
        RunResult done = runner.resumeAsync("review-1", "no").get(60, TimeUnit.SECONDS);
        assertEquals("kept d", done.getState().get(OUTCOME));
    }

    @Test
    void aResumedRunReplaysCompletedTasksWithoutRunningThem() {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        boolean[] crash = {true};
        Workflow<Integer, Integer> sum = Workflow.define("sum", Integer.class, Integer.class, (flow, n) -> {
            int a = flow.task("a", Integer.class, () -> ran("a") * 0 + n);
            CompletableFuture<Integer> b = flow.taskAsync("b", Integer.class, () -> ran("b") * 0 + 2 * n);
            int ab = a + b.join(); // b completed (and recorded) before c runs
            return flow.task("c", Integer.class, () -> {
                ran("c");
                if (crash[0]) throw new IllegalStateException("simulated crash");
                return ab;
            });
        });
        CompletionException failed = assertThrows(CompletionException.class, () -> sum.runAsync(5, store, "s-1").join());
        assertEquals("simulated crash", failed.getCause().getMessage());
        crash[0] = false;
        assertEquals(15, sum.resumeAsync("s-1", store).join());
        assertEquals(1, count("a"));
        assertEquals(1, count("b"));
        assertEquals(2, count("c"));
    }

    @Test
    void anInterruptPausesTheRunAndTheAnswerResumesIt() {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        assertEquals("published draft 7", approve(store));
        CompletionException paused = assertThrows(CompletionException.class,
            () -> APPROVAL.runAsync("other", store, "approval-2").join());
        WorkflowInterruptedException interrupt = assertInstanceOf(WorkflowInterruptedException.class, paused.getCause());
        assertEquals("Publish 'other'? (yes/no)", interrupt.getPayload());
        assertEquals(1, interrupt.getPosition());
        assertEquals("kept other", APPROVAL.resumeAsync("approval-2", store, "no").join());
    }

    @Test
    void retriesTimeoutsEventsAndCharges() {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        List<Object> payloads = new CopyOnWriteArrayList<>();
        WorkflowSettings settings = WorkflowSettings.DEFAULT
            .withOwner("java-test")
            .withEventListener(event -> {
                if (event instanceof RunEvent.Custom custom) payloads.add(custom.getPayload());
            });
        TaskPolicy threeTries = TaskPolicy.DEFAULT.withRetries(3, Duration.ofMillis(1));
        Workflow<String, String> flaky = Workflow.define("flaky", String.class, String.class, (flow, x) ->
            flow.task("call", String.class, threeTries, () -> {
                flow.charge("usd", 0.25);
                if (ran("call") < 3) throw new IllegalStateException("busy");
                return x + " ok";
            }));
        assertEquals("x ok", flaky.runAsync("x", store, "f-1", settings).join());
        assertEquals(3, count("call"));
        List<String> kinds = payloads.stream().map(p -> p.getClass().getSimpleName()).toList();
        assertEquals(List.of("Started", "Retrying", "Retrying", "Completed"), kinds);

        Workflow<String, String> slow = Workflow.define("slow", String.class, String.class, (flow, x) ->
            flow.task("sleep", String.class, TaskPolicy.DEFAULT.withTimeout(Duration.ofMillis(100)), () -> {
                Thread.sleep(60_000);
                return x;
            }));
        CompletionException timedOut = assertThrows(CompletionException.class,
            () -> slow.runAsync("x", store, "t-1").join());
        TaskTimeoutException timeout = assertInstanceOf(TaskTimeoutException.class, timedOut.getCause());
        assertEquals("sleep", timeout.getTask());
    }

    @Test
    void aBudgetStopsTheWorkflowAtTheTaskThatCrossesIt() {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        Workflow<Integer, Integer> spender = Workflow.define("spender", Integer.class, Integer.class, (flow, n) -> {
            int total = 0;
            for (int i = 0; i < n; i++) {
                total += flow.task("call", Integer.class, () -> {
                    ran("call");
                    flow.charge("usd", 0.4);
                    return 1;
                });
            }
            return total;
        });
        WorkflowSettings budget = WorkflowSettings.DEFAULT.withBudget(new Budget().withMeter("usd", 1.0));
        CompletionException over = assertThrows(CompletionException.class,
            () -> spender.runAsync(5, store, "b-1", budget).join());
        WorkflowBudgetExceededException e = assertInstanceOf(WorkflowBudgetExceededException.class, over.getCause());
        assertEquals("usd", e.getMeter());
        assertEquals(3, count("call")); // 0.4, 0.8, then 1.2 crosses the limit of 1.0
        assertEquals(3, spender.runAsync(3, new InMemoryCheckpointStore(), "b-2").join());
    }

    @Test
    void aChangedWorkflowIsReportedNotReplayed() {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        assertThrows(CompletionException.class, () -> APPROVAL.runAsync("d", store, "c-1").join());
        Workflow<String, String> changed = Workflow.define("approval", String.class, String.class, (flow, draft) ->
            flow.task("lint", String.class, () -> draft));
        CompletionException e = assertThrows(CompletionException.class,
            () -> changed.resumeAsync("c-1", store, "yes").join());
        WorkflowNondeterminismException change = assertInstanceOf(WorkflowNondeterminismException.class, e.getCause());
        assertEquals(0, change.getPosition());
        assertTrue(change.getMessage().contains("recorded step 'check' at position 0, but the code now calls 'lint'"));
    }
}
