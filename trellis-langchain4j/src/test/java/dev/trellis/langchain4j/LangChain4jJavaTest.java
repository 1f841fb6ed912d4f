package dev.trellis.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.trellis.graph.Graph;
import dev.trellis.graph.StateKey;
import dev.trellis.graph.StateSchema;
import dev.trellis.javaapi.JavaGraph;
import dev.trellis.javaapi.Keys;
import dev.trellis.javaapi.Trellis;
import dev.trellis.runtime.RunEvent;
import dev.trellis.runtime.RunResult;
import dev.trellis.runtime.agent.AgentEvent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The module from Java: chat actions in a JavaGraph, and a ReAct agent with a Java @Tool object. */
class LangChain4jJavaTest {
    private final StateSchema schema = new StateSchema("java-chat");
    private final StateKey<String> question = Keys.required(schema, "question", String.class);
    private final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");
    private final StateKey<String> draft = Keys.of(schema, "draft", String.class, "");

    /** A real LangChain4j model: answers with its script, one turn per call. */
    static final class Scripted implements ChatModel {
        final List<AiMessage> turns;
        final List<ChatRequest> requests = Collections.synchronizedList(new ArrayList<>());

        Scripted(AiMessage... turns) {
            this.turns = new ArrayList<>(List.of(turns));
        }

        @Override
        public ChatResponse doChat(ChatRequest request) {
            requests.add(request);
            return ChatResponse.builder().aiMessage(turns.remove(0)).build();
        }
    }

    public static final class Calculator {
        final AtomicInteger calls = new AtomicInteger();

        @Tool("Adds two numbers")
        public int add(@P(name = "a", value = "first") int a, @P(name = "b", value = "second") int b) {
            calls.incrementAndGet();
            return a + b;
        }
    }

    @Test
    void chatAndStreamingChatActionsInABlockingNode() throws Exception {
        Scripted model = new Scripted(AiMessage.from("Four."));
        ScriptedStreamingModel streaming = new ScriptedStreamingModel(List.of("It ", "is ", "four."), null, null);
        Graph graph = JavaGraph.builder("java-chat", schema)
            .blockingNode("answer", ChatActions.chat(model, answer, s -> List.of(UserMessage.from(s.get(question)))))
            .blockingNode("draft", ChatActions.streamingChat(streaming, draft, s -> List.of(UserMessage.from("Explain"))))
            .start("answer")
            .edge("answer", "draft")
            .build();

        List<Object> tokens = Collections.synchronizedList(new ArrayList<>());
        RunResult result = Trellis.runner(graph)
            .start(Map.of("question", "2 + 2?"), event -> {
                if (event instanceof RunEvent.Custom custom) tokens.add(custom.getPayload());
            })
            .result().join();

        assertEquals("Four.", result.getState().get(answer));
        assertEquals("It is four.", result.getState().get(draft));
        assertEquals(
            List.of(new AgentEvent.Token("draft", "It "), new AgentEvent.Token("draft", "is "),
                new AgentEvent.Token("draft", "four.")),
            tokens);
        assertEquals(List.of(UserMessage.from("2 + 2?")), model.requests.get(0).messages());
    }

    @Test
    void aReactAgentWithAJavaToolObject() throws Exception {
        Calculator calculator = new Calculator();
        Scripted model = new Scripted(
            AiMessage.from(ToolExecutionRequest.builder().id("1").name("add").arguments("{\"a\": 2, \"b\": 2}").build()),
            AiMessage.from("2 + 2 = 4"));
        Graph agent = ReactAgent.builder(model)
            .tools(Tools.from(calculator))
            .maxSteps(3)
            .system("Use the calculator.")
            .build();

        RunResult result = Trellis.runner(agent)
            .invoke(Map.of("messages", List.of(new Message.User("What is 2 + 2?"))));

        assertEquals("2 + 2 = 4", result.getState().get(AgentState.answer));
        assertEquals(1, calculator.calls.get());
        assertEquals(2, model.requests.size());
        assertEquals(List.of("User", "Ai", "ToolResult", "Ai"),
            result.getState().get(AgentState.messages).stream()
                .map(m -> m.getClass().getSimpleName()).toList());
    }
}
