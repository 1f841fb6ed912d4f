package dev.trellis.langchain4j

import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.ChatResponse
import dev.langchain4j.model.chat.response.PartialResponse
import dev.langchain4j.model.chat.response.PartialResponseContext
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler
import dev.langchain4j.model.chat.response.StreamingHandle
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.trySendBlocking
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runInterruptible
import java.util.concurrent.atomic.AtomicReference

/**
 * How many tokens a model's callback thread may hand over before the node took them. A bound keeps backpressure; a
 * buffer rather than a rendezvous lets the node take the tokens that arrived in a row without a thread hand-off each
 * (`bench/HISTORY.md`, chat nodes).
 */
internal const val STREAM_BUFFER: Int = 64

/** Calls a blocking [ChatModel] on the IO pool; a cancelled caller interrupts the call. */
internal suspend fun ChatModel.chatSuspending(request: ChatRequest): ChatResponse =
    runInterruptible(Dispatchers.IO) { chat(request) }

/**
 * Streams [request] through this model and hands each token to [onToken] as it arrives, in order, then returns the
 * complete response. The model's callback thread runs at most [STREAM_BUFFER] tokens ahead of [onToken], then waits,
 * so a slow [onToken] (an event collector catching up) slows the model's stream down: nothing is buffered without
 * bound. A cancelled caller cancels the stream through its `StreamingHandle` and stops waiting at once.
 */
internal suspend fun StreamingChatModel.stream(request: ChatRequest, onToken: suspend (String) -> Unit): ChatResponse =
    coroutineScope {
        val tokens = Channel<String>(STREAM_BUFFER)
        val done = CompletableDeferred<ChatResponse>()
        val handle = AtomicReference<StreamingHandle?>()
        val handler =
            object : StreamingChatResponseHandler {
                override fun onPartialResponse(partialResponse: PartialResponse, context: PartialResponseContext) {
                    handle.compareAndSet(null, context.streamingHandle())
                    deliver(partialResponse.text())
                }

                override fun onPartialResponse(partialResponse: String) = deliver(partialResponse)

                private fun deliver(text: String) {
                    if (tokens.trySendBlocking(text).isFailure) handle.get()?.cancel()
                }

                override fun onCompleteResponse(completeResponse: ChatResponse) {
                    done.complete(completeResponse)
                    tokens.close()
                }

                override fun onError(error: Throwable) {
                    done.completeExceptionally(error)
                    tokens.close()
                }
            }
        // A model that calls the handler on the calling thread would block in trySendBlocking: call it elsewhere.
        launch(Dispatchers.IO) {
            try {
                chat(request, handler)
            } catch (e: Exception) {
                handler.onError(e)
            }
        }
        try {
            for (token in tokens) onToken(token)
            done.await()
        } finally {
            if (!done.isCompleted) {
                tokens.cancel()
                handle.get()?.cancel()
            }
        }
    }
