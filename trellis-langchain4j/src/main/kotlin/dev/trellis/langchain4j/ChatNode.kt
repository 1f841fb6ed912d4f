package dev.trellis.langchain4j

import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.request.ResponseFormat
import dev.langchain4j.model.chat.response.ChatResponse
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.agent.AgentEvent
import kotlinx.serialization.json.Json
import kotlin.time.Duration

/**
 * Declares a node [id] that sends the messages [messages] builds from the state to [model] and writes the answer's
 * text to [output]; returns a handle for wiring edges.
 *
 * When [conversation] is given, the answer is also appended to it (as a [Message.Ai]), so the state keeps the
 * conversation. [onResponse] may write more from the whole [ChatResponse] (token usage, finish reason). The call
 * runs on the IO pool; a cancelled run interrupts it. A failed call fails the attempt, retried by [retry]. The
 * response's tokens are charged to the budget meters [meters] ([TokenMeters]).
 *
 * ```kotlin
 * val answer = chatNode("answer", model, output = Qa.answer) { state ->
 *     listOf(SystemMessage.from("Answer in one sentence."), UserMessage.from(state[Qa.question]))
 * }
 * ```
 */
@JvmSynthetic
public fun GraphBuilder.chatNode(
    id: String,
    model: ChatModel,
    output: StateKey<String>,
    conversation: StateKey<List<Message>>? = null,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    onResponse: (NodeScope.(ChatResponse) -> Unit)? = null,
    messages: (State) -> List<ChatMessage>,
): NodeRef = node(id, timeout, retry, description ?: "chat") {
    val response = chatMetered(model, ChatRequest.builder().messages(messages(state)).build(), meters)
    writeAnswer(response, output, conversation, onResponse)
}

/**
 * Declares a node [id] that asks [model] for a JSON answer ([responseFormat], by default `ResponseFormat.JSON`) and
 * writes it, decoded with the key's own serializer, to the typed key [output].
 *
 * The prompt must describe the JSON expected (or pass a `ResponseFormat` with a JSON schema). An answer that does
 * not decode fails the attempt with an [IllegalStateException] naming the node, the key and the answer; with a
 * [retry] policy the model is asked again. The response's tokens are charged to [meters] ([TokenMeters]).
 *
 * ```kotlin
 * @Serializable data class Verdict(val approved: Boolean, val reason: String)
 * val judge = structuredChatNode("judge", model, output = Review.verdict) { state ->
 *     listOf(UserMessage.from("Judge ${state[Review.draft]}. Answer {\"approved\": bool, \"reason\": string}."))
 * }
 * ```
 */
@JvmSynthetic
public fun <T> GraphBuilder.structuredChatNode(
    id: String,
    model: ChatModel,
    output: StateKey<T>,
    responseFormat: ResponseFormat = ResponseFormat.JSON,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    messages: (State) -> List<ChatMessage>,
): NodeRef = node(id, timeout, retry, description ?: "structured chat") {
    val request = ChatRequest.builder().messages(messages(state)).responseFormat(responseFormat).build()
    val text = chatMetered(model, request, meters).aiMessage().text().orEmpty()
    set(output, decodeAnswer(text, output, nodeId))
}

/**
 * Declares a node [id] that streams the answer of [model] to the messages [messages] builds: each token becomes a
 * custom event of the node as it arrives (payload `AgentEvent.Token(id, text)`), then the whole text is written to
 * [output] (and appended to [conversation] when given).
 *
 * Tokens go through the node's `emit`, so a slow collector slows the stream down (backpressure as for every event)
 * and nothing is dropped. A cancelled run (or a timed-out attempt) cancels the stream through its
 * `StreamingHandle`; the tokens streamed so far stay in the event stream, the attempt writes nothing. The complete
 * response's token usage is charged to [meters] ([TokenMeters]).
 *
 * ```kotlin
 * val write = streamingChatNode("write", streamingModel, output = Doc.text) { state ->
 *     listOf(UserMessage.from("Write about ${state[Doc.topic]}"))
 * }
 * ```
 */
@JvmSynthetic
public fun GraphBuilder.streamingChatNode(
    id: String,
    model: StreamingChatModel,
    output: StateKey<String>,
    conversation: StateKey<List<Message>>? = null,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    onResponse: (NodeScope.(ChatResponse) -> Unit)? = null,
    messages: (State) -> List<ChatMessage>,
): NodeRef = node(id, timeout, retry, description ?: "streaming chat") {
    val request = ChatRequest.builder().messages(messages(state)).build()
    val response = model.stream(request) { emit(AgentEvent.Token(id, it)) }
    meters.charge(response, ::charge)
    writeAnswer(response, output, conversation, onResponse)
}

private fun NodeScope.writeAnswer(
    response: ChatResponse,
    output: StateKey<String>,
    conversation: StateKey<List<Message>>?,
    onResponse: (NodeScope.(ChatResponse) -> Unit)?,
) {
    val ai = response.aiMessage()
    set(output, ai.text().orEmpty())
    if (conversation != null) set(conversation, listOf(Message.of(ai)))
    onResponse?.invoke(this, response)
}

private val lenientJson = Json { ignoreUnknownKeys = true }

internal fun <T> decodeAnswer(text: String, output: StateKey<T>, nodeId: String): T = try {
    lenientJson.decodeFromString(output.serializer, stripFence(text))
} catch (e: IllegalArgumentException) {
    // SerializationException included
    throw IllegalStateException(
        "Node '$nodeId' got an answer that is not a ${output.typeName} for key '${output.name}': ${e.message}. " +
            "Answer: ${text.take(200)}. Describe the JSON expected in the prompt, or give the node a retry policy.",
        e,
    )
}

/** Models often wrap JSON in a Markdown code fence; the fence is not part of the value. */
private fun stripFence(text: String): String {
    val trimmed = text.trim()
    if (!trimmed.startsWith("```")) return trimmed
    return trimmed.removePrefix("```").substringAfter('\n').removeSuffix("```").trim()
}
