package dev.trellis.springai

import dev.trellis.graph.SurrogateSerializer
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable

/*
 * The serializers of StoredMessage and ToolCall. Those are plain classes (a data class's `copy` and `componentN` are
 * not API); their form in the state and in checkpoints is the one they had as `@Serializable` data classes, kept by
 * these forms with the same serial names, properties, defaults and order, so conversations saved before still decode.
 */

@Serializable
@SerialName("dev.trellis.springai.ToolCall")
private class ToolCallForm(val id: String, val name: String, val arguments: String) {
    fun toCall(): ToolCall = ToolCall(id, name, arguments)
}

private fun ToolCall.toForm(): ToolCallForm = ToolCallForm(id, name, arguments)

@Serializable
@SerialName("dev.trellis.springai.StoredMessage")
private sealed class StoredMessageForm {
    abstract fun toMessage(): StoredMessage

    @Serializable
    @SerialName("system")
    class System(val text: String) : StoredMessageForm() {
        override fun toMessage(): StoredMessage = StoredMessage.System(text)
    }

    @Serializable
    @SerialName("user")
    class User(val text: String) : StoredMessageForm() {
        override fun toMessage(): StoredMessage = StoredMessage.User(text)
    }

    @Serializable
    @SerialName("ai")
    class Ai(val text: String? = null, val toolCalls: List<ToolCallForm> = emptyList()) : StoredMessageForm() {
        override fun toMessage(): StoredMessage = StoredMessage.Ai(text, toolCalls.map { it.toCall() })
    }

    @Serializable
    @SerialName("tool")
    class ToolResult(val id: String, val toolName: String, val text: String) : StoredMessageForm() {
        override fun toMessage(): StoredMessage = StoredMessage.ToolResult(id, toolName, text)
    }
}

private fun StoredMessage.toForm(): StoredMessageForm = when (this) {
    is StoredMessage.System -> StoredMessageForm.System(text)
    is StoredMessage.User -> StoredMessageForm.User(text)
    is StoredMessage.Ai -> StoredMessageForm.Ai(text, toolCalls.map { it.toForm() })
    is StoredMessage.ToolResult -> StoredMessageForm.ToolResult(id, toolName, text)
}

/** [StoredMessage]'s serializer: a JSON object tagged by its kind, `{"type":"user","text":"Hi"}`. */
internal val storedMessageSerializer: KSerializer<StoredMessage> =
    SurrogateSerializer(StoredMessageForm.serializer(), { it.toForm() }, { it.toMessage() })

/** [ToolCall]'s serializer: `{"id":…,"name":…,"arguments":…}`. */
internal val toolCallSerializer: KSerializer<ToolCall> =
    SurrogateSerializer(ToolCallForm.serializer(), { it.toForm() }, { it.toCall() })
