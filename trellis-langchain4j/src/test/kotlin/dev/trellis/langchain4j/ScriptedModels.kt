package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolExecutionRequest
import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.ChatResponse
import dev.langchain4j.model.chat.response.PartialResponse
import dev.langchain4j.model.chat.response.PartialResponseContext
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler
import dev.langchain4j.model.chat.response.StreamingHandle
import dev.langchain4j.model.output.TokenUsage
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

/** One answer of a scripted model. */
sealed class Turn {
    /** Answers [text]. */
    data class Text(val text: String) : Turn()

    /** Asks for the tool [calls] (name to arguments). */
    data class Calls(val calls: List<Pair<String, String>>) : Turn()

    /** Fails with [error]. */
    data class Fail(val error: Exception) : Turn()

    /** Blocks until the calling thread is interrupted (a call cut off by a crash or a cancel). */
    data object Hang : Turn()
}

/**
 * A real LangChain4j [ChatModel] that replays [script], one turn per call, and records the requests it got. Calls
 * beyond the script fail, naming the call. [latencyMillis] is slept per call (a slow remote model). Each response
 * reports [usage] as its token usage (none by default).
 */
class ScriptedChatModel(
    vararg script: Turn,
    private val latencyMillis: Long = 0,
    private val usage: TokenUsage? = null,
) : ChatModel {
    private val turns = ConcurrentLinkedQueue(script.toList())
    val requests: MutableList<ChatRequest> = CopyOnWriteArrayList()

    override fun doChat(chatRequest: ChatRequest): ChatResponse {
        requests += chatRequest
        if (latencyMillis > 0) Thread.sleep(latencyMillis)
        val turn = turns.poll() ?: error("The script has no turn for call ${requests.size}")
        val ai =
            when (turn) {
                is Turn.Text -> AiMessage.from(turn.text)
                is Turn.Calls ->
                    AiMessage.from(
                        turn.calls.mapIndexed { i, (name, args) ->
                            ToolExecutionRequest.builder().id(
                                "call-${requests.size}-$i",
                            ).name(name).arguments(args).build()
                        },
                    )
                is Turn.Fail -> throw turn.error
                Turn.Hang -> {
                    Thread.sleep(Long.MAX_VALUE)
                    error("unreachable")
                }
            }
        return ChatResponse.builder().aiMessage(ai).tokenUsage(usage).build()
    }
}

/**
 * A real LangChain4j [StreamingChatModel] that streams [tokens] on a thread of its own, through
 * `onPartialResponse(PartialResponse, PartialResponseContext)`, then completes with their concatenation. With
 * [holdAfter], it stops after that many tokens and waits until the stream is cancelled through its handle; with
 * [failAfter], it fails after that many tokens.
 */
class ScriptedStreamingModel @JvmOverloads constructor(
    private val tokens: List<String>,
    private val holdAfter: Int? = null,
    private val failAfter: Int? = null,
    private val usage: TokenUsage? = null,
) : StreamingChatModel {
    val requests: MutableList<ChatRequest> = CopyOnWriteArrayList()
    val cancelled = CountDownLatch(1)
    val finished = CountDownLatch(1)

    override fun doChat(chatRequest: ChatRequest, handler: StreamingChatResponseHandler) {
        requests += chatRequest
        val handle =
            object : StreamingHandle {
                override fun cancel() = cancelled.countDown()

                override fun isCancelled(): Boolean = cancelled.count == 0L
            }
        Thread {
            try {
                for ((i, token) in tokens.withIndex()) {
                    if (i == holdAfter) {
                        cancelled.await(30, TimeUnit.SECONDS)
                        return@Thread
                    }
                    if (i == failAfter) {
                        handler.onError(IllegalStateException("stream broke after $i tokens"))
                        return@Thread
                    }
                    if (handle.isCancelled) return@Thread
                    handler.onPartialResponse(PartialResponse(token), PartialResponseContext(handle))
                }
                handler.onCompleteResponse(
                    ChatResponse.builder().aiMessage(AiMessage.from(tokens.joinToString(""))).tokenUsage(usage).build(),
                )
            } finally {
                finished.countDown()
            }
        }.start()
    }
}
