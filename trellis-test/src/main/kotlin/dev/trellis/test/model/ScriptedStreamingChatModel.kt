package dev.trellis.test.model

import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.PartialResponse
import dev.langchain4j.model.chat.response.PartialResponseContext
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler
import dev.langchain4j.model.chat.response.StreamingHandle
import dev.trellis.test.internal.promptOf
import java.util.concurrent.CountDownLatch

/**
 * A LangChain4j [StreamingChatModel] whose answers are scripted like [ScriptedChatModel]'s: an answer made with
 * [ScriptedAnswer.tokens] streams its tokens one by one (through `onPartialResponse` with a [StreamingHandle] that
 * cancels the stream), any other answer streams its text as one token. Tokens are delivered on the calling thread.
 */
public class ScriptedStreamingChatModel internal constructor(
    private val script: Script,
) : StreamingChatModel, ScriptedModel {
    override val requests: List<ChatRequest> get() = script.requests.toList()
    override val prompts: List<String> get() = requests.map(::promptOf)

    /** How many streams were cancelled through their handle (a run cancelled in the middle of a stream). */
    @Volatile
    public var cancelledStreams: Int = 0
        private set

    override fun doChat(chatRequest: ChatRequest, handler: StreamingChatResponseHandler) {
        val cancelled = CountDownLatch(1)
        val handle =
            object : StreamingHandle {
                override fun cancel() {
                    if (cancelled.count > 0) {
                        synchronized(this@ScriptedStreamingChatModel) { cancelledStreams++ }
                        cancelled.countDown()
                    }
                }

                override fun isCancelled(): Boolean = cancelled.count == 0L
            }
        val (number, answer) =
            try {
                script.next(chatRequest)
            } catch (e: UnscriptedCallException) {
                handler.onError(e)
                return
            }
        if (answer.hangs) {
            cancelled.await()
            return
        }
        val tokens = answer.tokens.ifEmpty { listOfNotNull(answer.text) }
        for (token in tokens) {
            if (handle.isCancelled) return
            handler.onPartialResponse(PartialResponse(token), PartialResponseContext(handle))
        }
        val response =
            try {
                answer.error?.let { throw it }
                answer.response(number)
            } catch (e: Exception) {
                handler.onError(e)
                return
            }
        handler.onCompleteResponse(response)
    }

    override fun assertAllAnswersUsed() {
        val unused = script.unused()
        if (unused.isNotEmpty()) {
            throw AssertionError(
                "The scripted streaming model got ${requests.size} call(s) but ${unused.size} answer(s) were " +
                    "never asked for: $unused. Prompts of the calls it got: $prompts.",
            )
        }
    }

    override fun toString(): String = "ScriptedStreamingChatModel(${requests.size} call(s))"
}
