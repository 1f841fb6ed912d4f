package dev.trellis.samples.spring;

import java.util.Arrays;
import java.util.List;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.MessageType;
import org.springframework.ai.chat.metadata.ChatResponseMetadata;
import org.springframework.ai.chat.metadata.DefaultUsage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import reactor.core.publisher.Flux;

/**
 * A Spring AI ChatModel that needs no network: it greets whoever the last user message names ("Greet Ada" gives
 * "Hello, Ada!"), and streams its answer word by word. It reports a token usage (words), so the run's meters count.
 */
public final class LocalChatModel implements ChatModel {
    @Override
    public ChatResponse call(Prompt prompt) {
        String answer = answer(prompt);
        return response(answer, new DefaultUsage(words(prompt.getContents()), words(answer)));
    }

    @Override
    public Flux<ChatResponse> stream(Prompt prompt) {
        List<String> pieces = Arrays.stream(answer(prompt).split("(?<= )")).toList();
        return Flux.fromIterable(pieces).map(piece -> response(piece, null));
    }

    private static String answer(Prompt prompt) {
        List<Message> users = prompt.getInstructions().stream()
            .filter(m -> m.getMessageType() == MessageType.USER).toList();
        String last = users.isEmpty() ? "" : users.get(users.size() - 1).getText();
        String name = last.startsWith("Greet ") ? last.substring("Greet ".length()).strip() : "there";
        return "Hello, " + name + "!";
    }

    private static int words(String text) {
        return text.isBlank() ? 0 : text.strip().split("\\s+").length;
    }

    private static ChatResponse response(String text, DefaultUsage usage) {
        ChatResponseMetadata.Builder metadata = ChatResponseMetadata.builder().model("local");
        if (usage != null) metadata.usage(usage);
        return new ChatResponse(List.of(new Generation(new AssistantMessage(text))), metadata.build());
    }
}
