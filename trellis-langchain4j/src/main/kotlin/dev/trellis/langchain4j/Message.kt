package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolExecutionRequest
import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.langchain4j.data.message.UserMessage
import dev.trellis.runtime.agent.PlainValue
import kotlinx.serialization.KSerializer

/**
 * A chat message as the state and its checkpoints keep it: a small serializable value (kotlinx.serialization,
 * [Message.serializer], never Java serialization) that converts to and from LangChain4j's [ChatMessage] with
 * [toChatMessage] and [Message.of]. Messages are values: equal when of the same kind with the same properties.
 *
 * A conversation is a `StateKey<List<Message>>` with `Reducer.append()` (see [Conversation.key]): each node appends
 * its messages, the checkpoint holds the conversation, and a resumed run continues it.
 *
 * Only text is kept: a user message with images or other content fails [of] with the fix (keep such content
 * outside the state and refer to it by id).
 */
public sealed class Message : PlainValue() {
    /** The message in LangChain4j's form. */
    public abstract fun toChatMessage(): ChatMessage

    /** Instructions to the model. */
    public class System(
        /** The instructions. */
        public val text: String,
    ) : Message() {
        override fun toChatMessage(): ChatMessage = SystemMessage.from(text)

        override fun properties(): List<Pair<String, Any?>> = listOf("text" to text)
    }

    /** What the user said. */
    public class User(
        /** The user's text. */
        public val text: String,
    ) : Message() {
        override fun toChatMessage(): ChatMessage = UserMessage.from(text)

        override fun properties(): List<Pair<String, Any?>> = listOf("text" to text)
    }

    /** The model's answer: text, tool calls, or both. */
    public class Ai @JvmOverloads constructor(
        /** The answer's text, null when the model only called tools. */
        public val text: String? = null,
        /** The tools the model asks to call, in the model's order. */
        public val toolCalls: List<ToolCall> = emptyList(),
    ) : Message() {
        override fun toChatMessage(): ChatMessage = when {
            toolCalls.isEmpty() -> AiMessage.from(text ?: "")
            text == null -> AiMessage.from(toolCalls.map { it.toRequest() })
            else -> AiMessage.from(text, toolCalls.map { it.toRequest() })
        }

        override fun properties(): List<Pair<String, Any?>> = listOf("text" to text, "toolCalls" to toolCalls)
    }

    /** The result of one tool call, answering the [ToolCall] with the same [id]. */
    public class ToolResult(
        /** The id of the tool call answered. */
        public val id: String,
        /** The tool's name. */
        public val toolName: String,
        /** What the tool returned, as text. */
        public val text: String,
    ) : Message() {
        override fun toChatMessage(): ChatMessage = ToolExecutionResultMessage.from(id, toolName, text)

        override fun properties(): List<Pair<String, Any?>> = listOf("id" to id, "toolName" to toolName, "text" to text)
    }

    /** Converts LangChain4j messages; the serializer. */
    public companion object {
        /**
         * How messages are written in the state and its checkpoints: a JSON object tagged by its kind
         * (`{"type":"user","text":"Hi"}`; `system`, `user`, `ai`, `tool`).
         */
        @JvmStatic
        public fun serializer(): KSerializer<Message> = messageSerializer

        /** The state form of [message]; fails for content that is not text, naming it. */
        @JvmStatic
        public fun of(message: ChatMessage): Message = when (message) {
            is SystemMessage -> System(message.text())
            is UserMessage -> {
                require(message.hasSingleText()) {
                    "A user message with ${message.contents().map { it.type() }} cannot be kept in the state, only " +
                        "text can; keep images and files outside the state and put a reference to them in the text."
                }
                User(message.singleText())
            }
            is AiMessage -> Ai(message.text(), message.toolExecutionRequests().orEmpty().map { ToolCall.of(it) })
            is ToolExecutionResultMessage -> ToolResult(message.id(), message.toolName(), message.text())
            else -> throw IllegalArgumentException(
                "A ${message.type()} message cannot be kept in the state; convert it to a system, user, AI or " +
                    "tool result message first.",
            )
        }

        /** The LangChain4j form of [messages], in order. */
        @JvmStatic
        public fun toChatMessages(messages: List<Message>): List<ChatMessage> = messages.map { it.toChatMessage() }
    }
}

/**
 * A tool call the model asked for: the call's [id], the tool's [name] and its [arguments] as JSON. A value: equal to
 * another with the same properties.
 */
public class ToolCall(
    /** The id the model gave the call; its result names it. */
    public val id: String,
    /** The name of the tool. */
    public val name: String,
    /** The arguments, a JSON object as text. */
    public val arguments: String,
) : PlainValue() {
    /** The call in LangChain4j's form. */
    public fun toRequest(): ToolExecutionRequest =
        ToolExecutionRequest.builder().id(id).name(name).arguments(arguments).build()

    override fun properties(): List<Pair<String, Any?>> = listOf("id" to id, "name" to name, "arguments" to arguments)

    /** Converts LangChain4j tool calls; the serializer. */
    public companion object {
        /** How tool calls are written in the state: `{"id":…,"name":…,"arguments":…}`. */
        @JvmStatic
        public fun serializer(): KSerializer<ToolCall> = toolCallSerializer

        /** The state form of [request]; a request without an id gets one made of its name. */
        @JvmStatic
        public fun of(request: ToolExecutionRequest): ToolCall =
            ToolCall(request.id() ?: request.name(), request.name(), request.arguments() ?: "{}")
    }
}
