package dev.trellis.langchain4j

import dev.trellis.graph.SurrogateSerializer
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable

/*
 * The serializers of Message and ToolCall. Those are plain classes (a data class's `copy` and `componentN` are not
 * API); their form in the state and in checkpoints is the one they had as `@Serializable` data classes, kept by these
 * forms with the same serial names, properties, defaults and order, so conversations saved before still decode.
 */

@Serializable
@SerialName("dev.trellis.langchain4j.ToolCall")
private class ToolCallForm(val id: String, val name: String, val arguments: String) {
    fun toCall(): ToolCall = ToolCall(id, name, arguments)
}

private fun ToolCall.toForm(): ToolCallForm = ToolCallForm(id, name, arguments)

@Serializable
@SerialName("dev.trellis.langchain4j.Message")
private sealed class MessageForm {
    abstract fun toMessage(): Message

    @Serializable
    @SerialName("system")
    class System(val text: String) : MessageForm() {
        override fun toMessage(): Message = Message.System(text)
    }

    @Serializable
    @SerialName("user")
    class User(val text: String) : MessageForm() {
        override fun toMessage(): Message = Message.User(text)
    }

    @Serializable
    @SerialName("ai")
    class Ai(val text: String? = null, val toolCalls: List<ToolCallForm> = emptyList()) : MessageForm() {
        override fun toMessage(): Message = Message.Ai(text, toolCalls.map { it.toCall() })
    }

    @Serializable
    @SerialName("tool")
    class ToolResult(val id: String, val toolName: String, val text: String) : MessageForm() {
        override fun toMessage(): Message = Message.ToolResult(id, toolName, text)
    }
}

private fun Message.toForm(): MessageForm = when (this) {
    is Message.System -> MessageForm.System(text)
    is Message.User -> MessageForm.User(text)
    is Message.Ai -> MessageForm.Ai(text, toolCalls.map { it.toForm() })
    is Message.ToolResult -> MessageForm.ToolResult(id, toolName, text)
}

/** [Message]'s serializer: a JSON object tagged by its kind, `{"type":"user","text":"Hi"}`. */
internal val messageSerializer: KSerializer<Message> =
    SurrogateSerializer(MessageForm.serializer(), { it.toForm() }, { it.toMessage() })

/** [ToolCall]'s serializer: `{"id":…,"name":…,"arguments":…}`. */
internal val toolCallSerializer: KSerializer<ToolCall> =
    SurrogateSerializer(ToolCallForm.serializer(), { it.toForm() }, { it.toCall() })
