package dev.trellis.springai

import dev.trellis.runtime.agent.PlainValue
import kotlinx.serialization.KSerializer
import org.springframework.ai.chat.messages.AssistantMessage
import org.springframework.ai.chat.messages.Message
import org.springframework.ai.chat.messages.SystemMessage
import org.springframework.ai.chat.messages.ToolResponseMessage
import org.springframework.ai.chat.messages.UserMessage

/**
 * A chat message as the state and its checkpoints keep it: a small serializable value (kotlinx.serialization,
 * [StoredMessage.serializer], never Java serialization) that converts to and from Spring AI's [Message] with
 * [toMessage] and [StoredMessage.of]. Messages are values: equal when of the same kind with the same properties.
 *
 * A conversation is a `StateKey<List<StoredMessage>>` with `Reducer.append()` (see [Conversation.key]): each node
 * appends its messages, the checkpoint holds the conversation, and a resumed run continues it. Only text is kept:
 * a user message with media fails [of] with the fix.
 */
public sealed class StoredMessage : PlainValue() {
    /** The message in Spring AI's form. */
    public abstract fun toMessage(): Message

    /** Instructions to the model. */
    public class System(
        /** The instructions. */
        public val text: String,
    ) : StoredMessage() {
        override fun toMessage(): Message = SystemMessage(text)

        override fun properties(): List<Pair<String, Any?>> = listOf("text" to text)
    }

    /** What the user said. */
    public class User(
        /** The user's text. */
        public val text: String,
    ) : StoredMessage() {
        override fun toMessage(): Message = UserMessage(text)

        override fun properties(): List<Pair<String, Any?>> = listOf("text" to text)
    }

    /** The model's answer: text, tool calls, or both. */
    public class Ai @JvmOverloads constructor(
        /** The answer's text, null when the model only called tools. */
        public val text: String? = null,
        /** The tools the model asks to call, in the model's order. */
        public val toolCalls: List<ToolCall> = emptyList(),
    ) : StoredMessage() {
        override fun toMessage(): Message {
            val builder = AssistantMessage.builder()
            builder.toolCalls(toolCalls.map { it.toSpring() })
            if (text != null) builder.content(text)
            return builder.build()
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
    ) : StoredMessage() {
        override fun toMessage(): Message = ToolResponseMessage.builder()
            .responses(listOf(ToolResponseMessage.ToolResponse(id, toolName, text)))
            .build()

        override fun properties(): List<Pair<String, Any?>> = listOf("id" to id, "toolName" to toolName, "text" to text)
    }

    /** Converts Spring AI messages; the serializer. */
    public companion object {
        /**
         * How messages are written in the state and its checkpoints: a JSON object tagged by its kind
         * (`{"type":"user","text":"Hi"}`; `system`, `user`, `ai`, `tool`).
         */
        @JvmStatic
        public fun serializer(): KSerializer<StoredMessage> = storedMessageSerializer

        /** The state form of [message]; fails for content that is not text, naming it. */
        @JvmStatic
        public fun of(message: Message): StoredMessage = when (message) {
            is SystemMessage -> System(message.text.orEmpty())
            is UserMessage -> {
                require(message.media.isEmpty()) {
                    "A user message with ${message.media.size} media item(s) cannot be kept in the state, only text " +
                        "can; keep images and files outside the state and put a reference to them in the text."
                }
                User(message.text.orEmpty())
            }
            is AssistantMessage -> answer(message)
            is ToolResponseMessage -> {
                val response = message.responses.singleOrNull()
                    ?: throw IllegalArgumentException(
                        "A tool response message with ${message.responses.size} responses cannot be kept as one " +
                            "message; keep one StoredMessage.ToolResult per response.",
                    )
                ToolResult(response.id(), response.name(), response.responseData())
            }
            else -> throw IllegalArgumentException(
                "A ${message.messageType} message cannot be kept in the state; convert it to a system, user, " +
                    "assistant or tool response message first.",
            )
        }

        /** The state form of a model's answer. */
        @JvmStatic
        public fun answer(message: AssistantMessage): Ai = Ai(message.text, message.toolCalls.map { ToolCall.of(it) })

        /** The Spring AI form of [messages], in order. */
        @JvmStatic
        public fun toMessages(messages: List<StoredMessage>): List<Message> = messages.map { it.toMessage() }
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
    /** The call in Spring AI's form. */
    public fun toSpring(): AssistantMessage.ToolCall = AssistantMessage.ToolCall(id, "function", name, arguments)

    override fun properties(): List<Pair<String, Any?>> = listOf("id" to id, "name" to name, "arguments" to arguments)

    /** Converts Spring AI tool calls; the serializer. */
    public companion object {
        /** How tool calls are written in the state: `{"id":…,"name":…,"arguments":…}`. */
        @JvmStatic
        public fun serializer(): KSerializer<ToolCall> = toolCallSerializer

        /** The state form of [call]; a call without an id gets one made of its name. */
        @JvmStatic
        public fun of(call: AssistantMessage.ToolCall): ToolCall =
            ToolCall(orElse(call.id(), call.name()), call.name(), orElse(call.arguments(), "{}"))

        /** Some models leave out an id or empty arguments, whatever the types say. */
        private fun orElse(value: String?, fallback: String): String = if (value.isNullOrBlank()) fallback else value
    }
}
