package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolExecutionRequest
import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.langchain4j.data.message.UserMessage
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable

/**
 * A chat message as the state and its checkpoints keep it: a small serializable value (kotlinx.serialization, never
 * Java serialization) that converts to and from LangChain4j's [ChatMessage] with [toChatMessage] and [Message.of].
 *
 * A conversation is a `StateKey<List<Message>>` with `Reducer.append()` (see [Conversation.key]): each node appends
 * its messages, the checkpoint holds the conversation, and a resumed run continues it.
 *
 * Only text is kept: a user message with images or other content fails [of] with the fix (keep such content
 * outside the state and refer to it by id).
 */
@Serializable
public sealed class Message {
    /** The message in LangChain4j's form. */
    public abstract fun toChatMessage(): ChatMessage

    /** Instructions to the model. */
    @Serializable
    @SerialName("system")
    public data class System(
        /** The instructions. */
        val text: String,
    ) : Message() {
        override fun toChatMessage(): ChatMessage = SystemMessage.from(text)
    }

    /** What the user said. */
    @Serializable
    @SerialName("user")
    public data class User(
        /** The user's text. */
        val text: String,
    ) : Message() {
        override fun toChatMessage(): ChatMessage = UserMessage.from(text)
    }

    /** The model's answer: text, tool calls, or both. */
    @Serializable
    @SerialName("ai")
    public data class Ai(
        /** The answer's text, null when the model only called tools. */
        val text: String? = null,
        /** The tools the model asks to call, in the model's order. */
        val toolCalls: List<ToolCall> = emptyList(),
    ) : Message() {
        override fun toChatMessage(): ChatMessage = when {
            toolCalls.isEmpty() -> AiMessage.from(text ?: "")
            text == null -> AiMessage.from(toolCalls.map { it.toRequest() })
            else -> AiMessage.from(text, toolCalls.map { it.toRequest() })
        }
    }

    /** The result of one tool call, answering the [ToolCall] with the same [id]. */
    @Serializable
    @SerialName("tool")
    public data class ToolResult(
        /** The id of the tool call answered. */
        val id: String,
        /** The tool's name. */
        val toolName: String,
        /** What the tool returned, as text. */
        val text: String,
    ) : Message() {
        override fun toChatMessage(): ChatMessage = ToolExecutionResultMessage.from(id, toolName, text)
    }

    /** Converts LangChain4j messages. */
    public companion object {
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

/** A tool call the model asked for: the call's [id], the tool's [name] and its [arguments] as JSON. */
@Serializable
public data class ToolCall(
    /** The id the model gave the call; its result names it. */
    val id: String,
    /** The name of the tool. */
    val name: String,
    /** The arguments, a JSON object as text. */
    val arguments: String,
) {
    /** The call in LangChain4j's form. */
    public fun toRequest(): ToolExecutionRequest =
        ToolExecutionRequest.builder().id(id).name(name).arguments(arguments).build()

    /** Converts LangChain4j tool calls. */
    public companion object {
        /** The state form of [request]; a request without an id gets one made of its name. */
        @JvmStatic
        public fun of(request: ToolExecutionRequest): ToolCall =
            ToolCall(request.id() ?: request.name(), request.name(), request.arguments() ?: "{}")
    }
}
