package dev.trellis.springai

import dev.trellis.runtime.agent.StoredMessageKinds
import dev.trellis.runtime.agent.StoredMessageVisitor
import dev.trellis.runtime.agent.storedMessageSerializer
import dev.trellis.runtime.agent.storedToolCallSerializer
import kotlinx.serialization.KSerializer

/*
 * The serializers of StoredMessage and ToolCall: the form all model adapters keep chat messages in (graph-runtime's
 * `dev.trellis.runtime.agent`), the one these classes had as `@Serializable` data classes, so conversations saved
 * before still decode. This module maps its classes to the stored kinds.
 */

private object Kinds : StoredMessageKinds<StoredMessage, ToolCall> {
    override fun system(text: String): StoredMessage = StoredMessage.System(text)

    override fun user(text: String): StoredMessage = StoredMessage.User(text)

    override fun ai(text: String?, toolCalls: List<ToolCall>): StoredMessage = StoredMessage.Ai(text, toolCalls)

    override fun toolResult(id: String, toolName: String, text: String): StoredMessage = StoredMessage.ToolResult(
        id,
        toolName,
        text,
    )

    override fun toolCall(id: String, name: String, arguments: String): ToolCall = ToolCall(id, name, arguments)

    override fun parts(call: ToolCall): Triple<String, String, String> = Triple(call.id, call.name, call.arguments)

    override fun <R> kind(message: StoredMessage, to: StoredMessageVisitor<ToolCall, R>): R = when (message) {
        is StoredMessage.System -> to.system(message.text)
        is StoredMessage.User -> to.user(message.text)
        is StoredMessage.Ai -> to.ai(message.text, message.toolCalls)
        is StoredMessage.ToolResult -> to.toolResult(message.id, message.toolName, message.text)
    }
}

/** [StoredMessage]'s serializer: a JSON object tagged by its kind, `{"type":"user","text":"Hi"}`. */
internal val storedMessageSerializer: KSerializer<StoredMessage> =
    storedMessageSerializer("dev.trellis.springai.StoredMessage", Kinds)

/** [ToolCall]'s serializer: `{"id":…,"name":…,"arguments":…}`. */
internal val toolCallSerializer: KSerializer<ToolCall> =
    storedToolCallSerializer("dev.trellis.springai.ToolCall", Kinds)
