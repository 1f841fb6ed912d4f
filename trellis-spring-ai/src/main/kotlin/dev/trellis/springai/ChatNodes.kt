package dev.trellis.springai

import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.agent.AgentEvent
import org.springframework.ai.chat.client.ChatClient
import org.springframework.ai.chat.messages.Message
import org.springframework.ai.chat.model.ChatModel
import org.springframework.ai.chat.model.ChatResponse
import org.springframework.ai.chat.model.StreamingChatModel
import org.springframework.ai.chat.prompt.ChatOptions
import org.springframework.ai.chat.prompt.Prompt
import kotlin.time.Duration

/**
 * Declares a node [id] that sends the messages [messages] builds from the state to [model] and writes the answer's
 * text to [output]; returns a handle for wiring edges.
 *
 * When [conversation] is given, the answer is also appended to it (as a [StoredMessage.Ai]). [options] go with the
 * prompt (model, temperature; null: the model's defaults). [onResponse] may write more from the whole
 * [ChatResponse] (metadata, finish reason). The call runs on the IO pool; a cancelled run interrupts it. A failed call
 * fails the attempt, retried by [retry]. The response's tokens are charged to the budget meters [meters].
 *
 * ```kotlin
 * val answer = chatNode("answer", model, output = Qa.answer) { state ->
 *     listOf(SystemMessage("Answer in one sentence."), UserMessage(state[Qa.question]))
 * }
 * ```
 *
 * From Java: [SpringAiActions.chat] with a `JavaGraph`'s `blockingNode`.
 */
@JvmSynthetic
public fun GraphBuilder.chatNode(
    id: String,
    model: ChatModel,
    output: StateKey<String>,
    conversation: StateKey<List<StoredMessage>>? = null,
    options: ChatOptions? = null,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    onResponse: (NodeScope.(ChatResponse) -> Unit)? = null,
    messages: (State) -> List<Message>,
): NodeRef = chat(
    id,
    ModelSource.OfModel(model),
    output,
    conversation,
    options,
    timeout,
    retry,
    description,
    meters,
    onResponse,
    messages,
)

/**
 * As the [chatNode] over a `ChatModel`, through a [ChatClient]: its default system text, options and advisors
 * (memory, RAG, logging) apply to every call; the messages built from the state are the prompt. From Java:
 * [SpringAiActions.chat].
 */
@JvmSynthetic
public fun GraphBuilder.chatNode(
    id: String,
    client: ChatClient,
    output: StateKey<String>,
    conversation: StateKey<List<StoredMessage>>? = null,
    options: ChatOptions? = null,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    onResponse: (NodeScope.(ChatResponse) -> Unit)? = null,
    messages: (State) -> List<Message>,
): NodeRef = chat(
    id,
    ModelSource.OfClient(client),
    output,
    conversation,
    options,
    timeout,
    retry,
    description,
    meters,
    onResponse,
    messages,
)

/**
 * Declares a node [id] that streams the answer of [model] to the messages [messages] builds: the text of each chunk
 * becomes a custom event of the node as it arrives (payload `AgentEvent.Token(id, text)`), then the whole text is
 * written to [output] (and appended to [conversation] when given).
 *
 * Tokens go through the node's `emit`, so a slow collector slows the stream down (the node's demand on the model's
 * `Flux` is at most 64 chunks ahead) and nothing is dropped. A cancelled run (or a timed-out attempt) cancels the
 * subscription, which stops the model's stream; the tokens streamed so far stay in the event stream, the attempt
 * writes nothing. The last usage the stream reports is charged to [meters].
 *
 * ```kotlin
 * val write = streamingChatNode("write", model, output = Doc.text) { state ->
 *     listOf(UserMessage("Write about ${state[Doc.topic]}"))
 * }
 * ```
 *
 * From Java: [SpringAiActions.streamingChat] with a `JavaGraph`'s `blockingNode`.
 */
@JvmSynthetic
public fun GraphBuilder.streamingChatNode(
    id: String,
    model: StreamingChatModel,
    output: StateKey<String>,
    conversation: StateKey<List<StoredMessage>>? = null,
    options: ChatOptions? = null,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    onResponse: (NodeScope.(ChatResponse) -> Unit)? = null,
    messages: (State) -> List<Message>,
): NodeRef = streaming(
    id,
    ModelSource.OfModel(model),
    output,
    conversation,
    options,
    timeout,
    retry,
    description,
    meters,
    onResponse,
    messages,
)

/**
 * As the [streamingChatNode] over a `StreamingChatModel`, through a [ChatClient] (its defaults and advisors apply).
 * From Java: [SpringAiActions.streamingChat].
 */
@JvmSynthetic
public fun GraphBuilder.streamingChatNode(
    id: String,
    client: ChatClient,
    output: StateKey<String>,
    conversation: StateKey<List<StoredMessage>>? = null,
    options: ChatOptions? = null,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    onResponse: (NodeScope.(ChatResponse) -> Unit)? = null,
    messages: (State) -> List<Message>,
): NodeRef = streaming(
    id,
    ModelSource.OfClient(client),
    output,
    conversation,
    options,
    timeout,
    retry,
    description,
    meters,
    onResponse,
    messages,
)

private fun GraphBuilder.chat(
    id: String,
    source: ModelSource,
    output: StateKey<String>,
    conversation: StateKey<List<StoredMessage>>?,
    options: ChatOptions?,
    timeout: Duration?,
    retry: Retry?,
    description: String?,
    meters: TokenMeters,
    onResponse: (NodeScope.(ChatResponse) -> Unit)?,
    messages: (State) -> List<Message>,
): NodeRef = node(id, timeout, retry, description ?: "chat") {
    val response = source.callSuspending(Prompt(messages(state), options))
    meters.charge(response, ::charge)
    writeAnswer(response, output, conversation, onResponse)
}

private fun GraphBuilder.streaming(
    id: String,
    source: ModelSource,
    output: StateKey<String>,
    conversation: StateKey<List<StoredMessage>>?,
    options: ChatOptions?,
    timeout: Duration?,
    retry: Retry?,
    description: String?,
    meters: TokenMeters,
    onResponse: (NodeScope.(ChatResponse) -> Unit)?,
    messages: (State) -> List<Message>,
): NodeRef = node(id, timeout, retry, description ?: "streaming chat") {
    val response = source.streamSuspending(Prompt(messages(state), options)) { emit(AgentEvent.Token(id, it)) }
    meters.charge(response, ::charge)
    writeAnswer(response, output, conversation, onResponse)
}

private fun NodeScope.writeAnswer(
    response: ChatResponse,
    output: StateKey<String>,
    conversation: StateKey<List<StoredMessage>>?,
    onResponse: (NodeScope.(ChatResponse) -> Unit)?,
) {
    val answer = response.answerOf(nodeId)
    set(output, answer.text.orEmpty())
    if (conversation != null) set(conversation, listOf(StoredMessage.answer(answer)))
    onResponse?.invoke(this, response)
}
