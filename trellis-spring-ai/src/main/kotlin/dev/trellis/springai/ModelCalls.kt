package dev.trellis.springai

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.buffer
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.runInterruptible
import org.reactivestreams.Publisher
import org.springframework.ai.chat.client.ChatClient
import org.springframework.ai.chat.messages.AssistantMessage
import org.springframework.ai.chat.metadata.ChatResponseMetadata
import org.springframework.ai.chat.metadata.EmptyUsage
import org.springframework.ai.chat.metadata.Usage
import org.springframework.ai.chat.model.ChatModel
import org.springframework.ai.chat.model.ChatResponse
import org.springframework.ai.chat.model.Generation
import org.springframework.ai.chat.model.StreamingChatModel
import org.springframework.ai.chat.prompt.Prompt

/**
 * How many chunks of a streamed answer the model may send ahead of the node: the demand the node signals to the
 * model's `Flux` (Reactive Streams backpressure), as `trellis-langchain4j`'s streaming nodes buffer 64 tokens.
 */
internal const val STREAM_BUFFER: Int = 64

/** What a node talks to: a Spring AI [ChatModel], [StreamingChatModel] or [ChatClient], behind one face. */
internal sealed interface ModelSource {
    /** Calls the model and waits for its whole answer (blocks the calling thread). */
    fun call(prompt: Prompt): ChatResponse

    /** The model's answer as a stream of chunks; nothing happens before it is subscribed to. */
    fun stream(prompt: Prompt): Publisher<ChatResponse>

    class OfModel(private val model: StreamingChatModel) : ModelSource {
        override fun call(prompt: Prompt): ChatResponse = (model as? ChatModel)?.call(prompt)
            ?: throw IllegalArgumentException(
                "${model.javaClass.name} only streams; use a streaming node, or give the node a ChatModel.",
            )

        override fun stream(prompt: Prompt): Publisher<ChatResponse> = model.stream(prompt)
    }

    class OfClient(private val client: ChatClient) : ModelSource {
        override fun call(prompt: Prompt): ChatResponse = client.prompt(prompt).call().chatResponse()
            ?: throw IllegalStateException(
                "The ChatClient returned no ChatResponse for the prompt; check its advisors.",
            )

        override fun stream(prompt: Prompt): Publisher<ChatResponse> = client.prompt(prompt).stream().chatResponse()
    }
}

/** Calls the model on the IO pool; a cancelled caller interrupts the call. */
internal suspend fun ModelSource.callSuspending(prompt: Prompt): ChatResponse =
    runInterruptible(Dispatchers.IO) { call(prompt) }

/**
 * Streams [prompt] and hands the text of each chunk to [onToken] as it arrives, in order, then returns the whole
 * answer as one [ChatResponse] (the chunks' texts joined, their tool calls, the last usage reported).
 *
 * The node asks the model's `Flux` for [STREAM_BUFFER] chunks at a time, and for more only as it takes them: a slow
 * [onToken] (an event collector catching up) slows the model's stream down, nothing is buffered without bound.
 * A cancelled caller cancels the subscription, which stops the model's stream (Spring AI's models close the
 * connection); a stream that ends with an error throws it.
 */
internal suspend fun ModelSource.streamSuspending(prompt: Prompt, onToken: suspend (String) -> Unit): ChatResponse {
    val answer = StreamedAnswer()
    stream(prompt).asFlow().buffer(STREAM_BUFFER).collect { chunk ->
        val text = answer.add(chunk)
        if (!text.isNullOrEmpty()) onToken(text)
    }
    return answer.response()
}

/** The chunks of a streamed answer, folded into one response. */
internal class StreamedAnswer {
    private val text = StringBuilder()
    private var sawText = false
    private val toolCalls = ArrayList<AssistantMessage.ToolCall>()
    private var usage: Usage? = null
    private var last: ChatResponse? = null

    /** Adds [chunk]; returns its text. */
    fun add(chunk: ChatResponse): String? {
        last = chunk
        chunk.metadata.usage.takeUnless { it is EmptyUsage }?.let { usage = it }
        val output = chunk.results.firstOrNull()?.output ?: return null
        toolCalls += output.toolCalls
        val piece = output.text
        if (piece != null) {
            sawText = true
            text.append(piece)
        }
        return piece
    }

    /** The whole answer. */
    fun response(): ChatResponse {
        val message = AssistantMessage.builder()
        message.toolCalls(toolCalls.toList())
        if (sawText || toolCalls.isEmpty()) message.content(text.toString())
        val metadata = ChatResponseMetadata.builder()
        last?.metadata?.let { metadata.id(it.id).model(it.model) }
        usage?.let { metadata.usage(it) }
        return ChatResponse(listOf(Generation(message.build())), metadata.build())
    }
}

/** The answer's message; a response without a generation fails, naming the node. */
internal fun ChatResponse.answerOf(nodeId: String): AssistantMessage = result?.output
    ?: throw IllegalStateException(
        "Node '$nodeId' got a ChatResponse without a generation from the model; check the model's configuration " +
            "(a filtered or empty answer), or give the node a retry policy.",
    )
