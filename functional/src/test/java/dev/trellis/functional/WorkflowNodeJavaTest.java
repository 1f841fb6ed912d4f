package dev.trellis.functional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.trellis.checkpoint.CheckpointStore;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import dev.trellis.javaapi.TrellisRunner;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Workflows composed with Java graphs: a workflow as a node of a JavaGraph (WorkflowActions), and a JavaGraph that
 * asks for input called as a graph task of a Java workflow.
 */
class WorkflowNodeJavaTest {
    private final AtomicInteger checks = new AtomicInteger();
    private final AtomicInteger publishes = new AtomicInteger();
    private final AtomicInteger notified = new AtomicInteger();
    private volatile boolean failPublish;

    private final Workflow<String, String> approval = Workflow.define("approval", String.class, String.class, (flow, draft) -> {
        String checked = flow.task("check", String.class, () -> {
            checks.incrementAndGet();
            return draft.trim();
        });
        String answer = flow.interrupt("Publish '" + checked + "'? (yes/no)");
        return flow.task("publish", String.class, () -> {
            publishes.incrementAndGet();
            if (failPublish) throw new IllegalStateException("the publisher is down");
            return answer.equals("yes") ? "published " + checked : "kept " + checked;
        });
    });

    private static final class Doc {
        final StateSchema schema = new StateSchema("doc");
        final StateKey<String> draft = Keys.required(schema, "draft", String.class);
        final StateKey<String> outcome = Keys.of(schema, "outcome", String.class, "");
    }

    /** A graph whose node "review" runs the approval workflow, then "notify"; built anew as a new process would. */
    private Graph reviewGraph(Doc doc, CheckpointStore store) {
        return JavaGraph.builder("review", doc.schema)
            .blockingNode("review", WorkflowActions.node(approval, store, doc.outcome, state -> state.get(doc.draft)))
            .node("notify", ctx -> notified.incrementAndGet())
            .start("review")
            .edge("review", "notify")
            .edge("notify", Graph.END)
            .build();
    }

    private static <T> T get(java.util.concurrent.CompletableFuture<T> future) throws Exception {
        return future.get(60, TimeUnit.SECONDS);
    }

    @Test
    void aWorkflowNodeOfAJavaGraphPausesItsRunAndResumesInANewProcessWithoutRunningItsTasksAgain(@TempDir Path dir)
        throws Exception {
        Path db = dir.resolve("runs.db");
        Doc doc = new Doc();
        try (SqliteCheckpointStore store = new SqliteCheckpointStore(db)) {
            JavaRunOptions options = JavaRunOptions.builder().checkpointing(new Checkpointing(store)).runId("doc-1").build();
            RunResult paused = get(Trellis.runner(reviewGraph(doc, store), options).invokeAsync(Map.of("draft", " d7 ")));
            assertEquals(Status.INTERRUPTED, paused.getStatus());
            assertEquals("Publish 'd7'? (yes/no)", paused.getInterrupts().get(0).getPayload());
        }
        Doc restarted = new Doc();
        try (SqliteCheckpointStore store = new SqliteCheckpointStore(db)) {
            JavaRunOptions options = JavaRunOptions.builder().checkpointing(new Checkpointing(store)).build();
            TrellisRunner runner = Trellis.runner(reviewGraph(restarted, store), options);
            RunResult done = get(runner.resumeAsync("doc-1", "yes"));
            assertEquals(Status.COMPLETED, done.getStatus());
            assertEquals("published d7", done.getState().get(restarted.outcome));
        }
        assertEquals(1, checks.get()); // replayed from the workflow's record, not run again
        assertEquals(1, publishes.get());
        assertEquals(1, notified.get());
    }

    @Test
    void aFailedWorkflowNodeRetriedWithItsGraphRunReplaysItsCompletedTasks() throws Exception {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        Doc doc = new Doc();
        TrellisRunner runner = Trellis.runner(
            reviewGraph(doc, store), JavaRunOptions.builder().checkpointing(new Checkpointing(store)).runId("doc-2").build());
        assertEquals(Status.INTERRUPTED, get(runner.invokeAsync(Map.of("draft", "d8"))).getStatus());
        failPublish = true;
        Throwable failed = assertThrows(Exception.class, () -> get(runner.resumeAsync("doc-2", "no")));
        while (failed.getCause() != null) failed = failed.getCause();
        assertEquals("the publisher is down", failed.getMessage());
        failPublish = false;
        RunResult done = get(runner.retryAsync("doc-2"));
        assertEquals(Status.COMPLETED, done.getStatus());
        assertEquals("kept d8", done.getState().get(doc.outcome));
        assertEquals(1, checks.get());
        assertEquals(2, publishes.get()); // the failed task ran again; the completed one did not
    }

    @Test
    void aGraphTaskWhoseJavaGraphAsksPausesTheWorkflowAndTheAnswerResumesTheGraphWhereItStopped() {
        AtomicInteger prepared = new AtomicInteger();
        StateSchema schema = new StateSchema("ask");
        StateKey<String> topic = Keys.required(schema, "topic", String.class);
        StateKey<String> draft = Keys.of(schema, "draft", String.class, "");
        StateKey<String> verdict = Keys.of(schema, "verdict", String.class, "");
        Graph asking = JavaGraph.builder("asking", schema)
            .node("prepare", ctx -> ctx.set(draft, "draft on " + ctx.get(topic) + " #" + prepared.incrementAndGet()))
            .node("approve", ctx -> ctx.set(verdict, ctx.get(draft) + ": " + ctx.interrupt("Publish " + ctx.get(draft) + "?")))
            .start("prepare")
            .edge("prepare", "approve")
            .edge("approve", Graph.END)
            .build();
        Workflow<String, String> publisher = Workflow.define("publisher", String.class, String.class, (flow, t) -> {
            String v = flow.graphTask("ask", asking, schema.stateOf(Map.of("topic", t)), verdict);
            return flow.task("after", String.class, () -> v + "!");
        });
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        CompletionException paused = assertThrows(CompletionException.class,
            () -> publisher.runAsync("tides", store, "p-1").join());
        WorkflowInterruptedException question = assertInstanceOf(WorkflowInterruptedException.class, paused.getCause());
        assertEquals("Publish draft on tides #1?", question.getPayload());
        assertEquals(0, question.getPosition());
        assertEquals("draft on tides #1: yes!", publisher.resumeAsync("p-1", store, "yes").join());
        assertEquals(1, prepared.get()); // the graph's completed node did not run again
    }
}
