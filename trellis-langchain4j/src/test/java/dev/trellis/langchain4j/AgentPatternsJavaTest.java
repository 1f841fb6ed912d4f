package dev.trellis.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.JavaRunOptions;
import dev.trellis.javaapi.Trellis;
import dev.trellis.runtime.Budget;
import dev.trellis.runtime.GraphRunException;
import dev.trellis.runtime.LimitExceededException;
import dev.trellis.runtime.RunResult;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The agent patterns from Java: token meters and budgets, a supervisor, voting and a synthesizer. */
class AgentPatternsJavaTest {
    /** A real LangChain4j model: answers with its script, one turn per call, each reporting 100 + 10 tokens. */
    static final class Scripted implements ChatModel {
        final List<AiMessage> turns;
        final List<ChatRequest> requests = Collections.synchronizedList(new ArrayList<>());

        Scripted(AiMessage... turns) {
            this.turns = Collections.synchronizedList(new ArrayList<>(List.of(turns)));
        }

        @Override
        public ChatResponse doChat(ChatRequest request) {
            requests.add(request);
            return ChatResponse.builder().aiMessage(turns.remove(0)).tokenUsage(new TokenUsage(100, 10)).build();
        }
    }

    private static AiMessage delegate(String worker, String task) {
        return AiMessage.from(ToolExecutionRequest.builder()
            .id(worker + "-1").name(worker).arguments("{\"task\": \"" + task + "\"}").build());
    }

    private final StateSchema schema = new StateSchema("java-patterns");
    private final StateKey<String> question = Keys.required(schema, "question", String.class);
    private final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");
    private final StateKey<List<String>> parts = Keys.appending(schema, "parts", String.class);

    @Test
    void chatActionsChargeCustomMetersAndABudgetStopsAReactAgent() throws Exception {
        TokenMeters meters = TokenMeters.builder().tokens("tokens").cost("usd", TokenPrice.perMillionTokens(2.0, 10.0)).build();
        Scripted model = new Scripted(AiMessage.from("Four."));
        Graph graph = JavaGraph.builder("java-metered", schema)
            .blockingNode("answer", ChatActions.chat(model, answer, s -> List.of(UserMessage.from(s.get(question))), meters))
            .start("answer")
            .build();

        RunResult result = Trellis.runner(graph).invoke(Map.of("question", "2 + 2?"));

        assertEquals(Map.of("tokens", 110.0, "usd", 0.0003), result.getMeters());

        AiMessage again = AiMessage.from(ToolExecutionRequest.builder().id("1").name("add").arguments("{\"a\": 1, \"b\": 1}").build());
        Graph agent = ReactAgent.builder(new Scripted(again, again, again, AiMessage.from("2")))
            .tools(Tools.from(new LangChain4jJavaTest.Calculator()))
            .build();
        JavaRunOptions settings = JavaRunOptions.builder().budget(new Budget().withMeter("tokens.input", 250.0)).build();
        GraphRunException error = assertThrows(GraphRunException.class,
            () -> Trellis.runner(agent, settings).invoke(Map.of("messages", List.of(new Message.User("1 + 1?")))));
        LimitExceededException limit = assertInstanceOf(LimitExceededException.class, error.getCause());
        assertEquals("tokens.input", limit.getMeter());
        assertEquals(300.0, limit.getTotal());
    }

    @Test
    void aSupervisorDelegatesToAReactAgentWorker() throws Exception {
        Scripted researcherModel = new Scripted(AiMessage.from("It is 21 C in Paris."));
        Graph researcher = ReactAgent.builder(researcherModel).id("researcher").build();
        Scripted boss = new Scripted(delegate("researcher", "weather in Paris"), AiMessage.from("Warm: 21 C."));
        Graph team = Supervisor.builder(boss)
            .worker(Worker.agent("researcher", "finds facts", researcher))
            .maxSteps(3)
            .build();

        RunResult result = Trellis.runner(team).invoke(Map.of("messages", List.of(new Message.User("Paris?"))));

        assertEquals("Warm: 21 C.", result.getState().get(AgentState.answer));
        assertEquals(UserMessage.from("weather in Paris"), researcherModel.requests.get(0).messages().get(0));
        assertEquals("It is 21 C in Paris.",
            ((ToolExecutionResultMessage) boss.requests.get(1).messages().get(3)).text());
        assertEquals(Map.of("tokens.input", 300.0, "tokens.output", 30.0), result.getMeters());
    }

    @Test
    void votingSamplesOfOneModelAndASynthesizer() throws Exception {
        Scripted model = new Scripted(AiMessage.from("Blue"), AiMessage.from("Green"), AiMessage.from("blue."));
        Graph vote = Voting.builder().samples(model, 3).maxParallel(1).decision(Decision.majority()).build(); // one after another: the script in order

        RunResult voted = Trellis.runner(vote).invoke(Map.of("messages", List.of(new Message.User("Sky colour?"))));

        assertEquals("Blue", voted.getState().get(VoteState.answer));
        assertEquals(List.of("Blue", "Green", "blue."), voted.getState().get(VoteState.candidates));

        Scripted writer = new Scripted(AiMessage.from("Bees fly and sting."));
        Graph graph = JavaGraph.builder("java-synth", schema)
            .blockingNode("merge", Synthesizer.action(writer, parts, answer, Synthesizer.DEFAULT_INSTRUCTIONS, s -> s.get(question)))
            .start("merge")
            .build();
        RunResult merged = Trellis.runner(graph).invoke(Map.of("question", "Bees?", "parts", List.of("Bees fly.", "Bees sting.")));
        assertEquals("Bees fly and sting.", merged.getState().get(answer));
        assertEquals(UserMessage.from("Question: Bees?\n\nPart 1:\nBees fly.\n\nPart 2:\nBees sting."),
            writer.requests.get(0).messages().get(1));
    }

    @Test
    void aThreadAgentRemembersEarlierRunsOfItsThread() throws Exception {
        Scripted model = new Scripted(AiMessage.from("Hi Ann."), AiMessage.from("You are Ann."));
        InMemoryConversationMemory memory = new InMemoryConversationMemory();
        Graph chat = ThreadAgent.of(ReactAgent.builder(model).build(), memory, 10);

        Trellis.runner(chat).invoke(Map.of("threadId", "ann", "messages", List.of(new Message.User("I am Ann."))));
        RunResult second = Trellis.runner(chat)
            .invoke(Map.of("threadId", "ann", "messages", List.of(new Message.User("Who am I?"))));

        assertEquals("You are Ann.", second.getState().get(ThreadState.answer));
        assertEquals(List.of(UserMessage.from("I am Ann."), AiMessage.from("Hi Ann."), UserMessage.from("Who am I?")),
            model.requests.get(1).messages());
        assertEquals(4, memory.load("ann").size());
    }

    /** The answer a structured chat decodes into, through the Jackson codec of the key. */
    public record Verdict(boolean approved, String reason) {}

    @Test
    void structuredOutputIntoAJavaRecord() throws Exception {
        StateKey<Verdict> verdict = Keys.of(schema, "verdict", Verdict.class, null);
        Scripted model = new Scripted(AiMessage.from("```json\n{\"approved\": true, \"reason\": \"clear\"}\n```"));
        Graph graph = JavaGraph.builder("java-structured", schema)
            .blockingNode("judge", ChatActions.structuredChat(model, verdict,
                s -> List.of(UserMessage.from("Judge " + s.get(question) + ". Answer {\"approved\": bool, \"reason\": string}."))))
            .start("judge")
            .build();

        RunResult result = Trellis.runner(graph).invoke(Map.of("question", "the draft"));

        assertEquals(new Verdict(true, "clear"), result.getState().get(verdict));
        assertEquals(dev.langchain4j.model.chat.request.ResponseFormat.JSON, model.requests.get(0).responseFormat());
        assertEquals(Map.of("tokens.input", 100.0, "tokens.output", 10.0), result.getMeters());
    }

    @Test
    void aReactAgentOverAStreamingModelStreamsTokenEvents() throws Exception {
        ScriptedStreamingModel streaming = new ScriptedStreamingModel(List.of("Hel", "lo."));
        Graph agent = ReactAgent.builder(streaming).maxSteps(2).build();
        List<Object> tokens = Collections.synchronizedList(new ArrayList<>());

        RunResult result = Trellis.runner(agent)
            .start(Map.of("messages", List.of(new Message.User("Hi"))), event -> {
                if (event instanceof dev.trellis.runtime.RunEvent.Custom custom) tokens.add(custom.getPayload());
            })
            .result().join();

        assertEquals("Hello.", result.getState().get(AgentState.answer));
        assertEquals(List.of(new dev.trellis.runtime.agent.AgentEvent.Token("model", "Hel"),
            new dev.trellis.runtime.agent.AgentEvent.Token("model", "lo.")), tokens);
    }

    @Test
    void aDurableMemoryOnSqliteOutlivesTheGraph(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        org.sqlite.SQLiteDataSource db = new org.sqlite.SQLiteDataSource();
        db.setUrl("jdbc:sqlite:" + dir.resolve("memory.db"));
        Scripted first = new Scripted(AiMessage.from("Hi Ann."));
        Trellis.runner(ThreadAgent.of(ReactAgent.builder(first).build(), new JdbcConversationMemory(db), 10))
            .invoke(Map.of("threadId", "ann", "messages", List.of(new Message.User("I am Ann."))));

        Scripted second = new Scripted(AiMessage.from("You are Ann."));
        Trellis.runner(ThreadAgent.of(ReactAgent.builder(second).build(), new JdbcConversationMemory(db), 10))
            .invoke(Map.of("threadId", "ann", "messages", List.of(new Message.User("Who am I?"))));

        assertEquals(List.of(UserMessage.from("I am Ann."), AiMessage.from("Hi Ann."), UserMessage.from("Who am I?")),
            second.requests.get(0).messages());
        assertEquals(4, new JdbcConversationMemory(db).load("ann").size());
    }
}
