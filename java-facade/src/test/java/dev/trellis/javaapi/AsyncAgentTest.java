package dev.trellis.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import dev.trellis.runtime.agent.AgentEvent;
import dev.trellis.runtime.agent.AgentInput;
import dev.trellis.runtime.agent.AgentSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Agents implemented in Java ({@link AsyncAgent}) in agent nodes. */
class AsyncAgentTest {
    private final Fixtures.Schema s = new Fixtures.Schema();
    private final StateKey<String> left = Keys.of(s.schema, "left", String.class, "");
    private final StateKey<String> right = Keys.of(s.schema, "right", String.class, "");
    private final ExecutorService llm = Executors.newCachedThreadPool();

    @AfterEach
    void shutDown() {
        llm.shutdownNow();
    }

    /** Keeps a conversation; answers on its own pool ("a blocking client"), streaming a step from there. */
    final class Chatty implements AsyncAgent {
        final List<String> history = new ArrayList<>();

        @Override
        public CompletionStage<String> call(AgentInput input, AsyncAgentScope scope) {
            history.add(input.getPrompt());
            int seen = history.size();
            scope.token("thinking about " + input.getPrompt());                 // inside call: never blocks
            return CompletableFuture.supplyAsync(() -> {
                scope.step("answered on " + Thread.currentThread().getName());  // the agent's own thread: may block
                return input.getPrompt() + " after " + seen + " message(s)";
            }, llm);
        }

        @Override
        public Optional<AgentSnapshot> snapshot() {
            return Optional.of(new AgentSnapshot(List.copyOf(history)));
        }

        @Override
        @SuppressWarnings("unchecked")
        public void restore(AgentSnapshot snapshot) {
            history.clear();
            history.addAll((List<String>) snapshot.getValue());
        }
    }

    private Graph twoCalls(AsyncAgent agent) {
        return JavaGraph.builder("agents", s.schema)
            .node("split", ctx -> {})
            .agentNode("left", agent, left, state -> "left " + state.get(s.question))
            .agentNode("right", agent, right, state -> "right " + state.get(s.question),
                NodeOptions.description("the right-hand call"))
            .start("split").edge("split", "left").edge("split", "right")
            .build();
    }

    @Test
    void callsOfOneSnapshottingAgentAreIsolatedAndStreamTheirEvents() throws Exception {
        Chatty agent = new Chatty();
        agent.history.add("system prompt");
        Graph graph = twoCalls(agent);
        List<RunEvent> events = new CopyOnWriteArrayList<>();
        RunResult result = Trellis.runner(graph).start(Map.of("question", "q"), events::add).result().get();

        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals("left q after 2 message(s)", result.getState().get(left));
        assertEquals("right q after 2 message(s)", result.getState().get(right));
        assertEquals(List.of("system prompt"), agent.history, "every call left the agent as it found it");
        assertEquals("the right-hand call", graph.node("right").getDescription());
        assertEquals("agent Chatty", graph.node("left").getDescription());

        List<Object> payloads = events.stream()
            .filter(e -> e instanceof RunEvent.Custom).map(e -> ((RunEvent.Custom) e).getPayload()).toList();
        assertTrue(payloads.contains(new AgentEvent.Token("Chatty", "thinking about left q")), payloads.toString());
        assertTrue(payloads.contains(new AgentEvent.Token("Chatty", "thinking about right q")), payloads.toString());
        assertEquals(2, payloads.stream().filter(p -> p instanceof AgentEvent.Step).count(), payloads.toString());
    }

    @Test
    void sessionsServeEveryCallAndRunInParallel() throws Exception {
        CountDownLatch bothCalling = new CountDownLatch(2);
        AtomicInteger sessions = new AtomicInteger();
        AsyncAgent agent = new AsyncAgent() {
            @Override
            public String getName() {
                return "sessions";
            }

            @Override
            public CompletionStage<String> call(AgentInput input, AsyncAgentScope scope) {
                throw new AssertionError("the agent itself is never called, only its sessions");
            }

            @Override
            public Optional<AsyncAgent> session() {
                int number = sessions.incrementAndGet();
                return Optional.of((input, scope) -> CompletableFuture.supplyAsync(() -> {
                    bothCalling.countDown();
                    try {
                        Fixtures.await(bothCalling, "both sessions to be called at once");
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    scope.emit("session " + number);
                    return input.getNodeId();
                }, llm));
            }
        };
        RunResult result = Trellis.runner(twoCalls(agent)).invoke(Map.of("question", "q"));
        assertEquals("left", result.getState().get(left));
        assertEquals("right", result.getState().get(right));
        assertEquals(2, sessions.get());
        assertEquals("agent sessions", twoCalls(agent).node("left").getDescription());
    }

    @Test
    void aFailedCallFailsTheNodeWithTheAgentsOwnException() {
        java.io.IOException down = new java.io.IOException("model down");
        AsyncAgent agent = (input, scope) -> CompletableFuture.failedFuture(down);
        GraphRunException e = assertThrows(GraphRunException.class, () -> Trellis.runner(twoCalls(agent)).invoke(Map.of("question", "q")));
        assertSame(down, e.getCause());

        AsyncAgent nothing = (input, scope) -> null;
        GraphRunException npe = assertThrows(GraphRunException.class, () -> Trellis.runner(twoCalls(nothing)).invoke(Map.of("question", "q")));
        assertTrue(npe.getCause().getMessage().contains("call returned null"), npe.getCause().getMessage());
    }

    @Test
    void cancellingTheRunCancelsTheCallsStage() throws Exception {
        CompletableFuture<String> pending = new CompletableFuture<>();
        CountDownLatch called = new CountDownLatch(1); // without sessions or snapshots, calls of one agent take turns
        AsyncAgent agent = (input, scope) -> {
            called.countDown();
            return pending;
        };
        CompletableFuture<RunResult> run = Trellis.runner(twoCalls(agent)).invokeAsync(Map.of("question", "q"));
        Fixtures.await(called, "the agent to be called");
        run.cancel(true);
        assertThrows(java.util.concurrent.CancellationException.class, () -> pending.get(10, java.util.concurrent.TimeUnit.SECONDS));
    }

    @Test
    void adaptersOfOneAgentAreEqualSoTheyShareItsLock() {
        Chatty agent = new Chatty();
        assertEquals(agent.asAgent(), agent.asAgent());
        assertEquals(agent.asAgent().hashCode(), agent.asAgent().hashCode());
        assertNotEquals(agent.asAgent(), new Chatty().asAgent());
        assertEquals("Chatty", agent.asAgent().getName());
    }
}
