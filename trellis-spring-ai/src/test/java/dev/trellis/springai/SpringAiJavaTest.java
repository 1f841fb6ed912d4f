package dev.trellis.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

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
import kotlinx.serialization.builtins.BuiltinSerializersKt;
import kotlinx.serialization.json.Json;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;
import reactor.core.publisher.Flux;

/** The module from Java: chat actions in a JavaGraph, a ChatClient, and a ReAct agent with a Java @Tool object. */
class SpringAiJavaTest {
    private final StateSchema schema = new StateSchema("java-chat");
    private final StateKey<String> question = Keys.required(schema, "question", String.class);
    private final StateKey<String> answer = Keys.of(schema, "answer", String.class, "");
    private final StateKey<String> draft = Keys.of(schema, "draft", String.class, "");

    /** A real Spring AI model: answers with its script, one message per call, and streams its tokens. */
    static final class Scripted implements ChatModel {
        final List<AssistantMessage> replies;
        final List<String> tokens;
        final List<Prompt> prompts = Collections.synchronizedList(new ArrayList<>());

        Scripted(List<String> tokens, AssistantMessage... replies) {
            this.tokens = tokens;
            this.replies = new ArrayList<>(List.of(replies));
        }

        @Override
        public ChatResponse call(Prompt prompt) {
            prompts.add(prompt);
            return new ChatResponse(List.of(new Generation(replies.remove(0))));
        }

        @Override
        public Flux<ChatResponse> stream(Prompt prompt) {
            prompts.add(prompt);
            return Flux.fromIterable(tokens).map(t -> new ChatResponse(List.of(new Generation(new AssistantMessage(t)))));
        }
    }

    public static final class Calculator {
        final AtomicInteger calls = new AtomicInteger();

        @Tool(description = "Adds two numbers")
        public int add(@ToolParam(description = "first") int a, @ToolParam(description = "second") int b) {
            calls.incrementAndGet();
            return a + b;
        }
    }

    @Test
    void storedMessagesAreValuesWithStaticSerializersAndTheirSavedForm() {
        List<StoredMessage> conversation = List.of(
            new StoredMessage.User("Weather in Paris?"),
            new StoredMessage.Ai(null, List.of(new ToolCall("c1", "temperature", "{}"))),
            new StoredMessage.ToolResult("c1", "temperature", "21"),
            new StoredMessage.Ai("21 C."));
        var serializer = BuiltinSerializersKt.ListSerializer(StoredMessage.serializer());
        // The form the conversation had in checkpoints when the messages were data classes, unchanged.
        String saved = "[{\"type\":\"user\",\"text\":\"Weather in Paris?\"},"
            + "{\"type\":\"ai\",\"toolCalls\":[{\"id\":\"c1\",\"name\":\"temperature\",\"arguments\":\"{}\"}]},"
            + "{\"type\":\"tool\",\"id\":\"c1\",\"toolName\":\"temperature\",\"text\":\"21\"},"
            + "{\"type\":\"ai\",\"text\":\"21 C.\"}]";
        assertEquals(saved, Json.Default.encodeToString(serializer, conversation));
        assertEquals(conversation, Json.Default.decodeFromString(serializer, saved));
        assertEquals(new ToolCall("c1", "t", "{}"),
            Json.Default.decodeFromString(ToolCall.serializer(), "{\"id\":\"c1\",\"name\":\"t\",\"arguments\":\"{}\"}"));
        assertEquals(new StoredMessage.Ai(), new StoredMessage.Ai(null));
        assertEquals(new StoredMessage.System("x").hashCode(), new StoredMessage.System("x").hashCode());
        assertNotEquals(new StoredMessage.User("x"), new StoredMessage.System("x"));
        assertEquals("ToolCall(id=c1, name=t, arguments={})", new ToolCall("c1", "t", "{}").toString());
    }

    @Test
    void chatAndStreamingChatActionsInABlockingNode() throws Exception {
        Scripted model = new Scripted(List.of("It ", "is ", "four."), new AssistantMessage("Four."));
        Graph graph = JavaGraph.builder("java-chat", schema)
            .blockingNode("answer", SpringAiActions.chat(model, answer, s -> List.of(new UserMessage(s.get(question)))))
            .blockingNode("draft", SpringAiActions.streamingChat(model, draft, s -> List.of(new UserMessage("Explain"))))
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
        assertEquals("2 + 2?", model.prompts.get(0).getInstructions().get(0).getText());
    }

    @Test
    void aChatActionThroughAChatClient() throws Exception {
        Scripted model = new Scripted(List.of(), new AssistantMessage("Four."));
        ChatClient client = ChatClient.builder(model).defaultSystem("Be brief.").build();
        Graph graph = JavaGraph.builder("java-client", schema)
            .blockingNode("answer", SpringAiActions.chat(client, answer, s -> List.of(new UserMessage(s.get(question)))))
            .start("answer")
            .build();

        RunResult result = Trellis.runner(graph).invoke(Map.of("question", "2 + 2?"));

        assertEquals("Four.", result.getState().get(answer));
        assertEquals(List.of("Be brief.", "2 + 2?"),
            model.prompts.get(0).getInstructions().stream().map(m -> m.getText()).toList());
    }

    @Test
    void aReactAgentWithAJavaToolObject() throws Exception {
        Calculator calculator = new Calculator();
        Scripted model = new Scripted(List.of(),
            AssistantMessage.builder()
                .toolCalls(List.of(new AssistantMessage.ToolCall("1", "function", "add", "{\"a\": 2, \"b\": 2}")))
                .build(),
            new AssistantMessage("2 + 2 = 4"));
        Graph agent = ReactAgent.builder(model)
            .tools(Tools.from(calculator))
            .maxSteps(3)
            .system("Use the calculator.")
            .build();

        RunResult result = Trellis.runner(agent)
            .invoke(Map.of("messages", List.of(new StoredMessage.User("What is 2 + 2?"))));

        assertEquals("2 + 2 = 4", result.getState().get(AgentState.answer));
        assertEquals(1, calculator.calls.get());
        assertEquals(2, model.prompts.size());
        assertEquals(List.of("User", "Ai", "ToolResult", "Ai"),
            result.getState().get(AgentState.messages).stream()
                .map(m -> m.getClass().getSimpleName()).toList());
    }
}
