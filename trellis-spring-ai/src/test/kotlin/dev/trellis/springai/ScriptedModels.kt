package dev.trellis.springai

import org.springframework.ai.chat.messages.AssistantMessage
import org.springframework.ai.chat.metadata.ChatResponseMetadata
import org.springframework.ai.chat.metadata.DefaultUsage
import org.springframework.ai.chat.metadata.Usage
import org.springframework.ai.chat.model.ChatModel
import org.springframework.ai.chat.model.ChatResponse
import org.springframework.ai.chat.model.Generation
import org.springframework.ai.chat.prompt.Prompt
import reactor.core.publisher.Flux
import reactor.core.scheduler.Schedulers
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch

/** One answer of a scripted model. */
sealed class Reply {
    /** Answers [text]. */
    data class Text(val text: String) : Reply()

    /** Asks for the tool [calls] (name to arguments). */
    data class Calls(val calls: List<Pair<String, String>>) : Reply()

    /** Fails with [error]. */
    data class Fail(val error: Exception) : Reply()

    /** Blocks until the calling thread is interrupted (a call cut off by a crash or a cancel). */
    data object Hang : Reply()
}

/** A usage of [input] prompt tokens and [output] completion tokens. */
fun usage(input: Int, output: Int): Usage = DefaultUsage(input, output)

/**
 * A real Spring AI [ChatModel] that replays [script], one reply per call, and records the prompts it got. Calls
 * beyond the script fail, naming the call. Each response reports [usage] (none by default).
 *
 * Its [stream] streams [tokens] (on a thread of Reactor's bounded elastic pool), then a last chunk with the usage;
 * with [holdAfter] it stops after that many tokens and waits until the subscription is cancelled ([cancelled]); with
 * [failAfter] it fails after that many tokens.
 */
class ScriptedChatModel(
    vararg script: Reply,
    private val usage: Usage? = null,
    private val tokens: List<String> = emptyList(),
    private val holdAfter: Int? = null,
    private val failAfter: Int? = null,
) : ChatModel {
    private val replies = ConcurrentLinkedQueue(script.toList())
    val prompts: MutableList<Prompt> = CopyOnWriteArrayList()
    val cancelled = CountDownLatch(1)

    override fun call(prompt: Prompt): ChatResponse {
        prompts += prompt
        val reply = replies.poll() ?: error("The script has no reply for call ${prompts.size}")
        val message =
            when (reply) {
                is Reply.Text -> AssistantMessage(reply.text)
                is Reply.Calls ->
                    AssistantMessage.builder().toolCalls(
                        reply.calls.mapIndexed { i, (name, args) ->
                            AssistantMessage.ToolCall("call-${prompts.size}-$i", "function", name, args)
                        },
                    ).build()
                is Reply.Fail -> throw reply.error
                Reply.Hang -> {
                    Thread.sleep(Long.MAX_VALUE)
                    error("unreachable")
                }
            }
        return response(message, usage)
    }

    override fun stream(prompt: Prompt): Flux<ChatResponse> = Flux.defer {
        prompts += prompt
        val sent = holdAfter ?: failAfter ?: tokens.size
        val chunks = Flux.fromIterable(tokens.take(sent)).map { response(AssistantMessage(it), null) }
        when {
            holdAfter != null -> chunks.concatWith(Flux.never())
            failAfter != null -> chunks.concatWith(Flux.error(IllegalStateException("stream broke after $sent tokens")))
            else -> chunks.concatWith(Flux.just(response(AssistantMessage(""), usage)))
        }
    }.doOnCancel { cancelled.countDown() }.subscribeOn(Schedulers.boundedElastic())

    private fun response(message: AssistantMessage, usage: Usage?): ChatResponse {
        val metadata = ChatResponseMetadata.builder()
        if (usage != null) metadata.usage(usage)
        return ChatResponse(listOf(Generation(message)), metadata.build())
    }
}
