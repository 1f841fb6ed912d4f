package dev.trellis.mcp;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** What the Java tests of this module share: a scripted model and a Java @Tool object. */
final class JavaFixtures {
    private JavaFixtures() {
    }

    /** A real LangChain4j model: answers with its script, one turn per call, and records the requests it got. */
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

    /** A local tool next to the MCP ones; counts its calls. */
    public static final class Calculator {
        final AtomicInteger calls = new AtomicInteger();

        @Tool("Adds two numbers")
        public int add(@P(name = "a", value = "first") int a, @P(name = "b", value = "second") int b) {
            calls.incrementAndGet();
            return a + b;
        }
    }
}
