package dev.trellis.a2a;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A2A from Java: a graph served with A2aServer, called from a Java graph's blocking node. */
class A2aJavaTest {
    private final StateSchema schema = new StateSchema("java-a2a");
    private final StateKey<String> question = Keys.required(schema, "question", String.class);
    private final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");
    private final StateKey<String> reply = Keys.of(schema, "reply", String.class, "");

    @Test
    void theDocsSnippetRuns() throws Exception {
        // docs/agents.md, A2A (Java)
        Graph echo = JavaGraph.builder("echo", schema)
            .node("answer", context -> context.set(answer, "echo: " + context.get(question)))
            .start("answer")
            .build();
        try (A2aServer server = A2aServer.builder(echo, question, answer).name("echo").description("Echoes").start();
             RemoteAgent remote = RemoteAgent.connect(server.getUrl())) {
            Graph caller = JavaGraph.builder("caller", schema)
                .blockingNode("ask", A2aActions.remoteAgent(remote, reply, s -> s.get(question)))
                .start("ask")
                .build();
            RunResult result = Trellis.runner(caller).invoke(Map.of("question", "hello"));
            System.out.println(result.getState().get(reply));
        }
    }

    @Test
    void aJavaGraphCallsAGraphServedOverA2a() throws Exception {
        Graph echo = JavaGraph.builder("echo", schema)
            .node("answer", context -> context.set(answer, "echo: " + context.get(question)))
            .start("answer")
            .build();
        try (A2aServer server = A2aServer.builder(echo, question, answer).name("echo").start();
             RemoteAgent remote = RemoteAgent.connect(server.getUrl())) {
            assertEquals("echo", remote.getCard().name());
            Graph caller = JavaGraph.builder("caller", schema)
                .blockingNode("ask", A2aActions.remoteAgent(remote, reply, s -> s.get(question)))
                .start("ask")
                .build();
            RunResult result = Trellis.runner(caller).invoke(Map.of("question", "hello"));
            assertEquals("echo: hello", result.getState().get(reply));

            List<A2aEvent> updates = new CopyOnWriteArrayList<>();
            RunResult streamed = Trellis.runner(caller).start(Map.of("question", "again"), event -> {
                if (event instanceof RunEvent.Custom custom && custom.getPayload() instanceof A2aEvent update) {
                    updates.add(update);
                }
            }).result().get(60, TimeUnit.SECONDS);
            assertEquals(Status.COMPLETED, streamed.getStatus());
            String taskId = updates.get(0).getTaskId();
            assertTrue(updates.contains(new A2aEvent.Artifact("echo", taskId, "answer", "echo: again")), updates.toString());
            assertTrue(updates.contains(new A2aEvent.Status("echo", taskId, "completed", "")), updates.toString());
        }
    }

    @Test
    void eventsAreValuesAndTheFailureIsMadeWithoutACause() {
        A2aEvent.Status status = new A2aEvent.Status("echo", "t1", "working", "thinking");
        assertEquals(new A2aEvent.Status("echo", "t1", "working", "thinking"), status);
        assertEquals(new A2aEvent.Status("echo", "t1", "working", "thinking").hashCode(), status.hashCode());
        assertNotEquals(new A2aEvent.Status("echo", "t1", "completed", "thinking"), status);
        assertEquals("Status(agent=echo, taskId=t1, state=working, text=thinking)", status.toString());
        A2aEvent.Artifact artifact = new A2aEvent.Artifact("echo", "t1", "answer", "42");
        assertEquals("answer", artifact.getName());
        assertEquals("42", artifact.getText());
        assertNotEquals(artifact, new A2aEvent.Artifact("echo", "t2", "answer", "42"));

        RemoteAgentException failure = new RemoteAgentException("echo", "t1", "failed", "The task failed");
        assertEquals("echo", failure.getAgent());
        assertEquals("t1", failure.getTaskId());
        assertEquals("failed", failure.getState());
        assertEquals("The task failed", failure.getMessage());
        assertNull(failure.getCause());
    }

    @Test
    void cancellingAJavaRunCancelsTheRemoteTask() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        Graph slow = JavaGraph.builder("slow", schema)
            .blockingNode("work", context -> {
                started.countDown();
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    stopped.countDown();
                    Thread.currentThread().interrupt();
                }
            })
            .start("work")
            .build();
        try (A2aServer server = A2aServer.builder(slow, question, answer).start();
             RemoteAgent remote = RemoteAgent.connect(server.getUrl())) {
            Graph caller = JavaGraph.builder("caller", schema)
                .blockingNode("ask", A2aActions.remoteAgent(remote, reply, s -> s.get(question)))
                .start("ask")
                .build();
            var run = Trellis.runner(caller).start(Map.of("question", "slowly"), event -> { });
            assertTrue(started.await(60, TimeUnit.SECONDS), "the remote run did not start");
            run.cancel();
            assertEquals(Status.CANCELLED, run.result().get(60, TimeUnit.SECONDS).getStatus());
            assertTrue(stopped.await(60, TimeUnit.SECONDS), "the remote run was not cancelled");
        }
    }
}
