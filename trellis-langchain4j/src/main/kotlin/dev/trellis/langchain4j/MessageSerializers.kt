package dev.trellis.langchain4j

import dev.trellis.runtime.agent.StoredMessageKinds
import dev.trellis.runtime.agent.StoredMessageVisitor
import dev.trellis.runtime.agent.storedMessageSerializer
import dev.trellis.runtime.agent.storedToolCallSerializer
import kotlinx.serialization.KSerializer

/*
 * The serializers of Message and ToolCall: the form all model adapters keep chat messages in (graph-runtime's
 * `dev.trellis.runtime.agent`), the one these classes had as `@Serializable` data classes, so conversations saved
 * before still decode. This module maps its classes to the stored kinds.
 */

private object Kinds : StoredMessageKinds<Message, ToolCall> {
    override fun system(text: String): Message = Message.System(text)

    override fun user(text: String): Message = Message.User(text)

    override fun ai(text: String?, toolCalls: List<ToolCall>): Message = Message.Ai(text, toolCalls)

    override fun toolResult(id: String, toolName: String, text: String): Message = Message.ToolResult(
        id,
        toolName,
        text,
    )

    override fun toolCall(id: String, name: String, arguments: String): ToolCall = ToolCall(id, name, arguments)

    override fun parts(call: ToolCall): Triple<String, String, String> = Triple(call.id, call.name, call.arguments)

    override fun <R> kind(message: Message, to: StoredMessageVisitor<ToolCall, R>): R = when (message) {
        is Message.System -> to.system(message.text)
        is Message.User -> to.user(message.text)
        is Message.Ai -> to.ai(message.text, message.toolCalls)
        is Message.ToolResult -> to.toolResult(message.id, message.toolName, message.text)
    }
}

/** [Message]'s serializer: a JSON object tagged by its kind, `{"type":"user","text":"Hi"}`. */
internal val messageSerializer: KSerializer<Message> = storedMessageSerializer("dev.trellis.langchain4j.Message", Kinds)

/** [ToolCall]'s serializer: `{"id":…,"name":…,"arguments":…}`. */
internal val toolCallSerializer: KSerializer<ToolCall> =
    storedToolCallSerializer("dev.trellis.langchain4j.ToolCall", Kinds)
