package dev.trellis.samples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Trellis;
import dev.trellis.langchain4j.AgentState;
import dev.trellis.langchain4j.ChatActions;
import dev.trellis.langchain4j.Decision;
import dev.trellis.langchain4j.InMemoryConversationMemory;
import dev.trellis.langchain4j.Message;
import dev.trellis.langchain4j.ReactAgent;
import dev.trellis.langchain4j.Supervisor;
import dev.trellis.langchain4j.ThreadAgent;
import dev.trellis.langchain4j.ThreadState;
import dev.trellis.langchain4j.TokenMeters;
import dev.trellis.langchain4j.TokenPrice;
import dev.trellis.langchain4j.Tools;
import dev.trellis.langchain4j.VoteState;
import dev.trellis.langchain4j.Voting;
import dev.trellis.langchain4j.Worker;
import dev.trellis.runtime.Budget;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.Status;
import dev.trellis.test.model.ScriptedAnswer;
import dev.trellis.test.model.ScriptedChatModel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The Java examples of {@code docs/agents.md}, as the guide shows them, run on scripted models and checked. */
class AgentsGuideJavaTest {
    private final ChatModel model = ScriptedChatModel.builder()
        .whenPrompt("Weather in Paris?",
            ScriptedAnswer.toolCall("temperature", "{\"city\": \"Paris\"}"), ScriptedAnswer.text("21 C in Paris."))
        .whenPrompt("Why?", ScriptedAnswer.text("Because."))
        .build();

    @Test
    void aChatActionInABlockingNodeAnswersTheQuestion() throws Exception {
        StateSchema schema = new StateSchema("qa");
        StateKey<String> question = Keys.required(schema, "question", String.class);
        StateKey<String> answer = Keys.of(schema, "answer", String.class, "");
        Graph qa = JavaGraph.builder("qa", schema)
            .blockingNode("ask", ChatActions.chat(model, answer,
                s -> List.of(SystemMessage.from("Be brief."), UserMessage.from(s.get(question)))))
            .start("ask")
            .build();
        assertEquals("Because.", Trellis.runner(qa).invoke(Map.of("question", "Why?")).getState().get(answer));
    }

    /** What the mail tool sends. */
    static final class Mailer {
        final List<String> sent = new CopyOnWriteArrayList<>();

        String send(String arguments) {
            sent.add(arguments);
            return "sent";
        }
    }

    @Test
    void toolsComeFromAnnotatedMethodsAndFromASpecificationWithAFunction() throws Exception {
        Mailer mailer = new Mailer();
        ToolSpecification mailSpec = ToolSpecification.builder().name("sendMail").description("Sends a mail").build();

        Tools tools = Tools.builder()
            .add(new Weather())                                  // @Tool methods, specifications by LangChain4j
            .add(mailSpec, arguments -> mailer.send(arguments))  // a ToolSpecification and a ToolFunction
            .requireApproval("sendMail")                         // a person approves each call first
            .build();
        assertEquals(List.of("temperature", "sendMail"), tools.getSpecifications().stream().map(ToolSpecification::name).toList());
    }

    @Test
    void aReactAgentCallsTheToolThenAnswers() throws Exception {
        Graph agent = ReactAgent.builder(model).tools(Tools.from(new Weather())).maxSteps(5).system("Be brief.").build();
        RunResult result = Trellis.runner(agent).invoke(Map.of("messages", List.of(new Message.User("Weather in Paris?"))));
        String answer = result.getState().get(AgentState.answer);
        assertEquals("21 C in Paris.", answer);
    }

    @Test
    void tokenMetersChargeEveryCallAndABudgetBoundsThem() throws Exception {
        ChatModel model = ScriptedChatModel.builder()
            .answer(ScriptedAnswer.text("5 C.").withUsage(1_000, 100))
            .build();
        Tools tools = Tools.from(new Weather());
        Map<String, Object> input = Map.of("messages", List.of(new Message.User("Weather in Oslo?")));

        TokenMeters meters = TokenMeters.builder().tokens("tokens").cost("usd", TokenPrice.perMillionTokens(3.0, 15.0)).build();
        Graph agent = ReactAgent.builder(model).tools(tools).meters(meters).build();
        RunResult result = Trellis.runner(agent, JavaRunOptions.builder().budget(new Budget().withMeter("usd", 0.5)).build())
            .invoke(input);
        assertEquals(1_100.0, result.getMeters().get("tokens"));
        assertEquals((1_000 * 3.0 + 100 * 15.0) / 1_000_000, result.getMeters().get("usd"), 1e-12);
    }

    @Test
    void aSupervisorDelegatesToAWorkerAgent() throws Exception {
        ChatModel model = ScriptedChatModel.builder()
            .whenPrompt("Write about bees",
                ScriptedAnswer.toolCall("researcher", "{\"task\": \"bees\"}"), ScriptedAnswer.text("Bees make honey."))
            .whenPrompt("bees", ScriptedAnswer.text("Bees live in hives."))
            .build();
        Tools search = Tools.from(new Weather());

        Graph team = Supervisor.builder(model)
            .worker(Worker.agent("researcher", "finds facts", ReactAgent.builder(model).tools(search).build()))
            .maxSteps(6)
            .build();
        RunResult result = Trellis.runner(team).invoke(Map.of("messages", List.of(new Message.User("Write about bees"))));
        assertEquals(Status.COMPLETED, result.getStatus());
        assertEquals("Bees make honey.", result.getState().get(AgentState.answer));
        assertTrue(result.getState().get(AgentState.messages).toString().contains("Bees live in hives."));
    }

    @Test
    void votingOfFiveSamplesWithAJudge() throws Exception {
        ChatModel model = ScriptedChatModel.of("Sydney", "Canberra", "Sydney", "Melbourne", "Sydney");
        ChatModel judge = ScriptedChatModel.of("[2]");

        Graph vote = Voting.builder().samples(model, 5).decision(Decision.judge(judge)).build();
        RunResult result = Trellis.runner(vote).invoke(Map.of("messages", List.of(new Message.User("Capital of Australia?"))));
        assertEquals(1, result.getState().get(VoteState.winner));
        assertEquals(result.getState().get(VoteState.candidates).get(1), result.getState().get(VoteState.answer));
    }

    @Test
    void aThreadAgentRemembersTheThreadAcrossRuns() throws Exception {
        ChatModel model = ScriptedChatModel.builder()
            .whenPrompt("I am Ann.", ScriptedAnswer.text("Hello Ann."))
            .whenPrompt("Who am I?", request ->
                ScriptedAnswer.text(request.messages().toString().contains("I am Ann.") ? "Ann." : "?"))
            .build();
        InMemoryConversationMemory memory = new InMemoryConversationMemory();
        Trellis.runner(ThreadAgent.of(ReactAgent.builder(model).build(), memory, 20))
            .invoke(Map.of("threadId", "ann", "messages", List.of(new Message.User("I am Ann."))));

        Graph chat = ThreadAgent.of(ReactAgent.builder(model).build(), new InMemoryConversationMemory(), 20);
        Trellis.runner(chat).invoke(Map.of("threadId", "ann", "messages", List.of(new Message.User("Who am I?"))));
        RunResult again = Trellis.runner(ThreadAgent.of(ReactAgent.builder(model).build(), memory, 20))
            .invoke(Map.of("threadId", "ann", "messages", List.of(new Message.User("Who am I?"))));
        assertEquals("Ann.", again.getState().get(ThreadState.answer));
    }
}
