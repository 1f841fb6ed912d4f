package dev.trellis.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.trellis.checkpoint.InMemoryCheckpointStore;
import dev.trellis.graph.Graph;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Trellis;
import dev.trellis.runtime.Checkpointing;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import kotlinx.serialization.json.Json;
import org.junit.jupiter.api.Test;

/** Swarms from Java: agents built with builders, handoffs by tool and by rule, events, the limit, a resume. */
class SwarmJavaTest {
    private static AiMessage handoff(String to, String reason) {
        return AiMessage.from(ToolExecutionRequest.builder()
            .id("h-" + to).name("transfer_to_" + to).arguments("{\"reason\": \"" + reason + "\"}").build());
    }

    private static Map<String, Object> ask(String text) {
        return Map.of("messages", List.of(new Message.User(text)));
    }

    @Test
    void triageHandsOffToBillingAndEachHandoffIsAnEvent() throws Exception {
        AgentPatternsJavaTest.Scripted triageModel = new AgentPatternsJavaTest.Scripted(handoff("billing", "a double charge"));
        AgentPatternsJavaTest.Scripted billingModel = new AgentPatternsJavaTest.Scripted(AiMessage.from("Refunded."));
        // docs/agents.md, Handoff and swarms (Java)
        SwarmAgent triage = SwarmAgent.builder("triage", "first contact: finds who can help").model(triageModel).build();
        SwarmAgent billing = SwarmAgent.builder("billing", "invoices, refunds and payments").model(billingModel).build();
        Graph support = Swarm.builder().agent(triage).agent(billing).maxHandoffs(3).build();

        List<Handoff> handoffs = new CopyOnWriteArrayList<>();
        RunResult result = Trellis.runner(support).start(ask("I was charged twice"), event -> {
            if (event instanceof RunEvent.Custom custom && custom.getPayload() instanceof Handoff handoff) {
                handoffs.add(handoff);
            }
        }).result().get(30, TimeUnit.SECONDS);

        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals("Refunded.", result.getState().get(SwarmState.answer));
        assertEquals("billing", result.getState().get(SwarmState.activeAgent));
        assertEquals(List.of(new Handoff("triage", "billing", "a double charge")), handoffs);
        assertEquals(handoffs, result.getState().get(SwarmState.handoffs));
    }

    @Test
    void theDocsJavaSwarmRuns() throws Exception {
        AgentPatternsJavaTest.Scripted triageModel = new AgentPatternsJavaTest.Scripted(handoff("billing", "a charge"));
        AgentPatternsJavaTest.Scripted billingModel = new AgentPatternsJavaTest.Scripted(AiMessage.from("Refunded."));
        SwarmAgent triage = SwarmAgent.builder("triage", "first contact: finds who can help").model(triageModel).build();
        SwarmAgent billing = SwarmAgent.builder("billing", "invoices, refunds and payments").model(billingModel).build();
        Graph support = Swarm.builder().agent(triage).agent(billing).maxHandoffs(3).build();
        RunResult result = Trellis.runner(support).invoke(Map.of("messages", List.of(new Message.User("I was charged twice"))));
        String answer = result.getState().get(SwarmState.answer);
        assertEquals("Refunded.", answer);
    }

    @Test
    void aRuleHandsOverWithoutAModel() throws Exception {
        // docs/agents.md, a handoff by rule (Java)
        SwarmAgent router = SwarmAgent.router("triage", "first contact",
            messages -> new HandoffTarget("tech", "all tickets go to tech today"));
        SwarmAgent tech = SwarmAgent.of("tech", "bugs", new AgentPatternsJavaTest.Scripted(AiMessage.from("Restart it.")));
        RunResult result = Trellis.runner(Swarm.builder().agent(router).agent(tech).build()).invoke(ask("It crashes"));
        assertEquals("Restart it.", result.getState().get(SwarmState.answer));
        assertEquals(1, (int) result.getState().get(SwarmState.steps)); // tech's call; the rule called no model
    }

    @Test
    void handoffsAreValuesWithAStaticSerializerAndTheirSavedForm() {
        Handoff handoff = new Handoff("triage", "billing", "a charge");
        assertEquals(new Handoff("triage", "billing", "a charge").hashCode(), handoff.hashCode());
        assertNotEquals(new Handoff("triage", "tech", "a charge"), handoff);
        assertEquals("Handoff(from=triage, to=billing, reason=a charge)", handoff.toString());
        // The form handoffs had in checkpoints as a data class, unchanged.
        String saved = "{\"from\":\"triage\",\"to\":\"billing\",\"reason\":\"a charge\"}";
        assertEquals(saved, Json.Default.encodeToString(Handoff.serializer(), handoff));
        assertEquals(handoff, Json.Default.decodeFromString(Handoff.serializer(), saved));
        assertEquals(new HandoffTarget("tech", "bugs"), new HandoffTarget("tech", "bugs"));
        assertNotEquals(new HandoffTarget("tech", "bugs"), new HandoffTarget("tech", "crashes"));
    }

    @Test
    void theHandoffLimitFailsTheRun() {
        SwarmAgent a = SwarmAgent.of("a", "A", new AgentPatternsJavaTest.Scripted(handoff("b", "yours")));
        SwarmAgent b = SwarmAgent.of("b", "B", new AgentPatternsJavaTest.Scripted(handoff("a", "no, yours")));
        RunResult result = Trellis.runner(Swarm.builder().agent(a).agent(b).maxHandoffs(1).build())
            .start(ask("help"), event -> { }).result().join();
        assertEquals(Status.FAILED, result.getStatus());
        Throwable error = result.getError();
        while (!(error instanceof HandoffLimitExceededException) && error.getCause() != null) {
            error = error.getCause();
        }
        HandoffLimitExceededException limit = assertInstanceOf(HandoffLimitExceededException.class, error);
        assertEquals(new Handoff("b", "a", "no, yours"), limit.getRefused());
        assertTrue(limit.getMessage().contains("raise maxHandoffs"), limit.getMessage());
    }

    @Test
    void aResumedRunGoesOnWithTheAgentThatHadControl() throws Exception {
        InMemoryCheckpointStore store = new InMemoryCheckpointStore();
        JavaRunOptions settings = JavaRunOptions.builder().runId("ticket").checkpointing(new Checkpointing(store)).build();
        Refunds refunds = new Refunds();
        Tools tools = Tools.builder().add(refunds).requireApproval("refund").build();
        AiMessage refund = AiMessage.from(ToolExecutionRequest.builder()
            .id("r1").name("refund").arguments("{\"charge\": \"ch_2\"}").build());
        Graph first = Swarm.builder()
            .agent(SwarmAgent.of("triage", "first contact", new AgentPatternsJavaTest.Scripted(handoff("billing", "refund"))))
            .agent(SwarmAgent.builder("billing", "refunds").model(new AgentPatternsJavaTest.Scripted(refund)).tools(tools).build())
            .build();
        RunResult paused = Trellis.runner(first, settings).invoke(ask("Refund ch_2"));
        assertEquals(Status.INTERRUPTED, paused.getStatus());

        AgentPatternsJavaTest.Scripted triage = new AgentPatternsJavaTest.Scripted();
        Graph again = Swarm.builder()
            .agent(SwarmAgent.of("triage", "first contact", triage))
            .agent(SwarmAgent.builder("billing", "refunds")
                .model(new AgentPatternsJavaTest.Scripted(AiMessage.from("Refunded ch_2."))).tools(tools).build())
            .build();
        RunResult done = Trellis.runner(again, settings).resumeAsync("ticket", "yes").get(30, TimeUnit.SECONDS);
        assertEquals("Refunded ch_2.", done.getState().get(SwarmState.answer));
        assertEquals(1, refunds.getMade().get());
        assertEquals(0, triage.requests.size());
    }
}
