package dev.trellis.bench

import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.ChatResponse
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler
import dev.trellis.graph.Graph
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.langchain4j.chatNode
import dev.trellis.langchain4j.streamingChatNode
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.agent.AgentEvent
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runInterruptible

/** The state of the chat benchmarks: the last answer. */
public object ChatBenchState : StateSchema("chat-bench") {
    /** The text of the last answer. */
    public val answer: StateKey<String> = key("answer", default = "")
}

/** A scripted model that answers at once with the same response, allocating nothing per call. */
public class ConstantChatModel : ChatModel {
    private val response = ChatResponse.builder().aiMessage(AiMessage.from("ok")).build()

    override fun doChat(chatRequest: ChatRequest): ChatResponse = response
}

/** A scripted streaming model that streams [tokens] tokens on the calling thread, then completes. */
public class ConstantStreamingModel(private val tokens: Int) : StreamingChatModel {
    private val response = ChatResponse.builder().aiMessage(AiMessage.from("t".repeat(tokens))).build()

    override fun doChat(chatRequest: ChatRequest, handler: StreamingChatResponseHandler) {
        for (i in 0 until tokens) handler.onPartialResponse("t")
        handler.onCompleteResponse(response)
    }
}

/**
 * The chat workloads: chains of [CALLS] model calls, each a chat node or a plain node calling the model itself, and
 * one streaming node of [TOKENS] tokens next to a plain node emitting as many token events itself.
 */
public object ChatWorkloads {
    /** Model calls per chain. */
    public const val CALLS: Int = 100

    /** Tokens per stream. */
    public const val TOKENS: Int = 1000

    /** The prompt every call sends. */
    @JvmField
    public val messages: List<ChatMessage> = listOf(UserMessage.from("Why is the sky blue?"))

    /** A request of [messages]. */
    @JvmStatic
    public fun request(): ChatRequest = ChatRequest.builder().messages(messages).build()

    /** [CALLS] chat nodes in a chain, each writing the answer. */
    public fun chatChain(model: ChatModel): Graph = graph("chat-chain", ChatBenchState) {
        val nodes = (0 until CALLS).map { i -> chatNode("c$i", model, ChatBenchState.answer) { messages } }
        start(nodes[0])
        for (i in 1 until CALLS) nodes[i - 1] then nodes[i]
    }

    /** [CALLS] plain nodes in a chain, each calling [model] itself (on the run's thread) and writing the answer. */
    public fun directChain(model: ChatModel): Graph = graph("direct-chain", ChatBenchState) {
        val nodes =
            (0 until CALLS).map { i ->
                node("c$i") { set(ChatBenchState.answer, model.chat(request()).aiMessage().text()) }
            }
        start(nodes[0])
        for (i in 1 until CALLS) nodes[i - 1] then nodes[i]
    }

    /**
     * [CALLS] plain nodes in a chain, each calling [model] itself on the IO pool as a chat node does
     * (`runInterruptible(Dispatchers.IO)`): the part of a chat node's cost that is the hop to a thread allowed to block.
     */
    public fun ioHopChain(model: ChatModel): Graph = graph("io-hop-chain", ChatBenchState) {
        val nodes =
            (0 until CALLS).map { i ->
                node("c$i") {
                    val text = runInterruptible(Dispatchers.IO) { model.chat(request()).aiMessage().text() }
                    set(ChatBenchState.answer, text)
                }
            }
        start(nodes[0])
        for (i in 1 until CALLS) nodes[i - 1] then nodes[i]
    }

    /** One streaming chat node. */
    public fun streamingNode(model: StreamingChatModel): Graph = graph("streaming", ChatBenchState) {
        start(streamingChatNode("write", model, ChatBenchState.answer) { messages })
    }

    /** One plain node emitting [TOKENS] token events itself, then writing the answer. */
    public fun emittingNode(): Graph = graph("emitting", ChatBenchState) {
        start(
            node("write") {
                val text = StringBuilder(TOKENS)
                for (i in 0 until TOKENS) {
                    emit(AgentEvent.Token("write", "t"))
                    text.append('t')
                }
                set(ChatBenchState.answer, text.toString())
            },
        )
    }

    /** Options that run the graph's nodes on `Dispatchers.Default`, as a server's coroutines would. */
    @JvmStatic
    public fun onDefault(): RunOptions = RunOptions(dispatcher = Dispatchers.Default)

    /** Options that run the graph's nodes on `Dispatchers.IO`, a pool whose threads may block. */
    @JvmStatic
    public fun onIo(): RunOptions = RunOptions(dispatcher = Dispatchers.IO)

    /** The state the chat graphs start from. */
    @JvmStatic
    public fun input(): dev.trellis.graph.State = ChatBenchState.initialState()

    /** The answer of a result. */
    @JvmStatic
    public fun answer(result: dev.trellis.runtime.RunResult): String = result.state[ChatBenchState.answer]
}
