package dev.trellis.langchain4j

import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.request.ResponseFormat
import dev.langchain4j.model.chat.response.ChatResponse
import dev.langchain4j.model.chat.response.PartialResponse
import dev.langchain4j.model.chat.response.PartialResponseContext
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler
import dev.langchain4j.model.chat.response.StreamingHandle
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.javaapi.JavaNodeScope
import dev.trellis.javaapi.NodeAction
import dev.trellis.runtime.agent.AgentEvent
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutionException
import java.util.concurrent.atomic.AtomicReference
import java.util.function.Function

/**
 * Chat nodes for a Java `JavaGraph`: actions to declare with `blockingNode` (a model call blocks its thread, which
 * the blocking node's executor provides and interrupts when the run is cancelled).
 *
 * ```java
 * builder.blockingNode("answer", ChatActions.chat(model, answer, s -> List.of(UserMessage.from(s.get(question)))))
 *        .blockingNode("write", ChatActions.streamingChat(streamingModel, draft, s -> List.of(...)));
 * ```
 */
public object ChatActions {
    /**
     * Sends the messages [messages] builds from the state to [model] and writes the answer's text to [output]; the
     * response's tokens are charged to [meters].
     */
    @JvmStatic
    @JvmOverloads
    public fun chat(
        model: ChatModel,
        output: StateKey<String>,
        messages: Function<State, List<ChatMessage>>,
        meters: TokenMeters = TokenMeters.DEFAULT,
    ): NodeAction = NodeAction { context ->
        val response = model.chat(ChatRequest.builder().messages(messages.apply(context.state)).build())
        meters.charge(response, context::charge)
        context.set(output, response.aiMessage().text().orEmpty())
    }

    /**
     * Streams the answer of [model]: each token becomes a custom event of the node (`AgentEvent.Token(nodeId,
     * text)`) as it arrives, then the whole text is written to [output]. The model's callback thread waits while a
     * slow subscriber catches up (backpressure); a cancelled run cancels the stream through its `StreamingHandle`.
     * The response's tokens are charged to [meters].
     */
    @JvmStatic
    @JvmOverloads
    public fun streamingChat(
        model: StreamingChatModel,
        output: StateKey<String>,
        messages: Function<State, List<ChatMessage>>,
        meters: TokenMeters = TokenMeters.DEFAULT,
    ): NodeAction = NodeAction { context ->
        val response = streamBlocking(model, context, messages.apply(context.state))
        meters.charge(response, context::charge)
        context.set(output, response.aiMessage().text().orEmpty())
    }

    /**
     * Asks [model] for a JSON answer ([responseFormat], `ResponseFormat.JSON` unless given) and writes it, decoded
     * with the key's own codec, to [output]: from Java a key of a record or class, declared with `Keys.of` (the
     * Jackson codec of `trellis-jackson`). As [structuredChatNode]: the prompt must describe the JSON expected; an
     * answer that does not decode fails the attempt naming the node, the key and the answer (a retry policy asks
     * again). The response's tokens are charged to [meters].
     *
     * ```java
     * record Verdict(boolean approved, String reason) {}
     * StateKey<Verdict> verdict = Keys.of(schema, "verdict", Verdict.class, null);
     * builder.blockingNode("judge", ChatActions.structuredChat(model, verdict, s -> List.of(UserMessage.from(
     *     "Judge the draft. Answer {\"approved\": bool, \"reason\": string}."))));
     * ```
     */
    @JvmStatic
    @JvmOverloads
    public fun <T> structuredChat(
        model: ChatModel,
        output: StateKey<T>,
        messages: Function<State, List<ChatMessage>>,
        responseFormat: ResponseFormat = ResponseFormat.JSON,
        meters: TokenMeters = TokenMeters.DEFAULT,
    ): NodeAction = NodeAction { context ->
        val request = ChatRequest.builder().messages(messages.apply(context.state)).responseFormat(responseFormat)
        val response = model.chat(request.build())
        meters.charge(response, context::charge)
        context.set(output, decodeAnswer(response.aiMessage().text().orEmpty(), output, context.nodeId))
    }

    private fun streamBlocking(
        model: StreamingChatModel,
        context: JavaNodeScope,
        messages: List<ChatMessage>,
    ): ChatResponse {
        val done = CompletableFuture<ChatResponse>()
        val handle = AtomicReference<StreamingHandle?>()
        val handler =
            object : StreamingChatResponseHandler {
                override fun onPartialResponse(partialResponse: PartialResponse, ctx: PartialResponseContext) {
                    handle.compareAndSet(null, ctx.streamingHandle())
                    deliver(partialResponse.text())
                }

                override fun onPartialResponse(partialResponse: String) = deliver(partialResponse)

                private fun deliver(text: String) {
                    if (done.isDone) return
                    try {
                        context.emit(AgentEvent.Token(context.nodeId, text))
                    } catch (e: Exception) {
                        // the run was cancelled: stop the stream
                        handle.get()?.cancel()
                        done.completeExceptionally(e)
                    }
                }

                override fun onCompleteResponse(completeResponse: ChatResponse) {
                    done.complete(completeResponse)
                }

                override fun onError(error: Throwable) {
                    done.completeExceptionally(error)
                }
            }
        model.chat(ChatRequest.builder().messages(messages).build(), handler)
        try {
            return done.get()
        } catch (e: InterruptedException) {
            handle.get()?.cancel()
            throw e
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        }
    }
}
