package dev.trellis.runtime.agent

import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.SurrogateSerializer
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder

/*
 * The one form in which the model adapters (`trellis-langchain4j`, `trellis-spring-ai`) keep chat messages in the state
 * and in checkpoints: a JSON object tagged by its kind, `{"type":"user","text":"Hi"}` (`system`, `user`, `ai`, `tool`),
 * and tool calls as `{"id":…,"name":…,"arguments":…}`. It is the form the adapters' messages had as `@Serializable`
 * data classes (same serial names, properties, defaults and order), so conversations saved before still decode. Each
 * adapter keeps its own message classes and maps them to these kinds ([StoredMessageKinds]).
 */

/** How an adapter's message type [M] and tool call type [C] map to the stored kinds of chat message. */
@InternalTrellisApi
public interface StoredMessageKinds<M, C> {
    /** Instructions to the model. */
    public fun system(text: String): M

    /** What the user said. */
    public fun user(text: String): M

    /** The model's answer: text, tool calls, or both. */
    public fun ai(text: String?, toolCalls: List<C>): M

    /** The result of tool call [id] of tool [toolName]. */
    public fun toolResult(id: String, toolName: String, text: String): M

    /** A tool call. */
    public fun toolCall(id: String, name: String, arguments: String): C

    /** The parts of [call]: id, name, arguments. */
    public fun parts(call: C): Triple<String, String, String>

    /** Which kind [message] is, given to [to]. */
    public fun <R> kind(message: M, to: StoredMessageVisitor<C, R>): R
}

/** Receives the kind and properties of one message (see [StoredMessageKinds.kind]). */
@InternalTrellisApi
public interface StoredMessageVisitor<C, R> {
    /** A system message. */
    public fun system(text: String): R

    /** A user message. */
    public fun user(text: String): R

    /** An answer of the model. */
    public fun ai(text: String?, toolCalls: List<C>): R

    /** A tool result. */
    public fun toolResult(id: String, toolName: String, text: String): R
}

/** The serializer of an adapter's messages, with the stored form and the descriptor name [serialName]. */
@InternalTrellisApi
public fun <M, C> storedMessageSerializer(serialName: String, kinds: StoredMessageKinds<M, C>): KSerializer<M> =
    Renamed(
        serialName,
        SurrogateSerializer(MessageForm.serializer(), { kinds.kind(it, FormOf(kinds)) }, { it.toMessage(kinds) }),
    )

/** The serializer of an adapter's tool calls, with the stored form and the descriptor name [serialName]. */
@InternalTrellisApi
public fun <M, C> storedToolCallSerializer(serialName: String, kinds: StoredMessageKinds<M, C>): KSerializer<C> =
    Renamed(
        serialName,
        SurrogateSerializer(ToolCallForm.serializer(), { callForm(kinds, it) }, { it.toCall(kinds) }),
    )

/** Keeps the adapter's own descriptor name, the type name that error messages about a state key give. */
@OptIn(ExperimentalSerializationApi::class)
private class Renamed<T>(serialName: String, private val delegate: KSerializer<T>) : KSerializer<T> {
    override val descriptor: SerialDescriptor = SerialDescriptor(serialName, delegate.descriptor)

    override fun serialize(encoder: Encoder, value: T) = delegate.serialize(encoder, value)

    override fun deserialize(decoder: Decoder): T = delegate.deserialize(decoder)
}

@Serializable
@SerialName("dev.trellis.runtime.agent.ToolCall")
private class ToolCallForm(val id: String, val name: String, val arguments: String) {
    fun <M, C> toCall(kinds: StoredMessageKinds<M, C>): C = kinds.toolCall(id, name, arguments)
}

private fun <M, C> callForm(kinds: StoredMessageKinds<M, C>, call: C): ToolCallForm =
    kinds.parts(call).let { (id, name, arguments) -> ToolCallForm(id, name, arguments) }

@Serializable
@SerialName("dev.trellis.runtime.agent.StoredMessage")
private sealed class MessageForm {
    abstract fun <M, C> toMessage(kinds: StoredMessageKinds<M, C>): M

    @Serializable
    @SerialName("system")
    class System(val text: String) : MessageForm() {
        override fun <M, C> toMessage(kinds: StoredMessageKinds<M, C>): M = kinds.system(text)
    }

    @Serializable
    @SerialName("user")
    class User(val text: String) : MessageForm() {
        override fun <M, C> toMessage(kinds: StoredMessageKinds<M, C>): M = kinds.user(text)
    }

    @Serializable
    @SerialName("ai")
    class Ai(val text: String? = null, val toolCalls: List<ToolCallForm> = emptyList()) : MessageForm() {
        override fun <M, C> toMessage(kinds: StoredMessageKinds<M, C>): M =
            kinds.ai(text, toolCalls.map { it.toCall(kinds) })
    }

    @Serializable
    @SerialName("tool")
    class ToolResult(val id: String, val toolName: String, val text: String) : MessageForm() {
        override fun <M, C> toMessage(kinds: StoredMessageKinds<M, C>): M = kinds.toolResult(id, toolName, text)
    }
}

private class FormOf<M, C>(private val kinds: StoredMessageKinds<M, C>) : StoredMessageVisitor<C, MessageForm> {
    override fun system(text: String): MessageForm = MessageForm.System(text)

    override fun user(text: String): MessageForm = MessageForm.User(text)

    override fun ai(text: String?, toolCalls: List<C>): MessageForm =
        MessageForm.Ai(text, toolCalls.map { callForm(kinds, it) })

    override fun toolResult(id: String, toolName: String, text: String): MessageForm =
        MessageForm.ToolResult(id, toolName, text)
}
