package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolExecutionRequest
import dev.langchain4j.agent.tool.ToolSpecification
import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.ChatResponse
import dev.langchain4j.model.chat.response.PartialResponse
import dev.langchain4j.model.chat.response.PartialResponseContext
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler
import dev.langchain4j.model.chat.response.StreamingHandle
import dev.langchain4j.model.output.TokenUsage
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.agent.AgentEvent
import dev.trellis.runtime.events
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CopyOnWriteArrayList

/**
 * A real LangChain4j [StreamingChatModel] with a script of turns: each streams its tokens on a thread of its own,
 * then completes with the text, or with [calls] (tool name to arguments) when given.
 */
class ScriptedStreamingToolModel(vararg turns: Pair<List<String>, List<Pair<String, String>>>) : StreamingChatModel {
    private val script = ConcurrentLinkedQueue(turns.toList())
    val requests: MutableList<ChatRequest> = CopyOnWriteArrayList()

    override fun doChat(chatRequest: ChatRequest, handler: StreamingChatResponseHandler) {
        requests += chatRequest
        val (tokens, calls) = script.poll() ?: error("The script has no turn for call ${requests.size}")
        val handle =
            object : StreamingHandle {
                override fun cancel() = Unit

                override fun isCancelled(): Boolean = false
            }
        Thread {
            tokens.forEach { handler.onPartialResponse(PartialResponse(it), PartialResponseContext(handle)) }
            val requests = calls.mapIndexed { i, (name, args) ->
                ToolExecutionRequest.builder().id("s$i").name(name).arguments(args).build()
            }
            val text = tokens.joinToString("")
            val ai = if (requests.isEmpty()) AiMessage.from(text) else AiMessage.from(text, requests)
            handler.onCompleteResponse(ChatResponse.builder().aiMessage(ai).tokenUsage(TokenUsage(20, 5)).build())
        }.start()
    }
}

class StreamingAgentTest {
    @Test
    fun `a streaming model in the ReAct loop streams its tokens as events while tools run as map tasks`(): Unit =
        runBlocking {
            val tools =
                Tools.builder().add(ToolSpecification.builder().name("clock").description("the time").build()) {
                    "12:00"
                }.build()
            val model =
                ScriptedStreamingToolModel(
                    listOf("Let me ", "check.") to listOf("clock" to "{}", "clock" to "{}"),
                    listOf("It is ", "noon.") to emptyList(),
                )
            val agent = reactAgent(model, tools, maxSteps = 3)

            val events = agent.events(stateOf(AgentState.messages to listOf(Message.User("Time?")))).toList()

            val result = (events.last() as RunEvent.Terminal).result
            result.status shouldBe Status.COMPLETED
            result.state[AgentState.answer] shouldBe "It is noon."
            val tokens = events.filterIsInstance<RunEvent.Custom>().mapNotNull { it.payload as? AgentEvent.Token }
            tokens shouldBe listOf("Let me ", "check.", "It is ", "noon.").map { AgentEvent.Token("model", it) }
            val started = events.filterIsInstance<RunEvent.NodeStarted>().map { it.path }
            // parallel tasks: their start events may come in either order
            (started.take(2) + started.subList(2, 4).sorted() + started.drop(4)) shouldBe
                listOf("model", "tools", "tools[0]", "tools[1]", "model")
            result.state[AgentState.messages].map { it::class.simpleName } shouldBe
                listOf("User", "Ai", "ToolResult", "ToolResult", "Ai")
            result.meters shouldBe mapOf("tokens.input" to 40.0, "tokens.output" to 10.0)
            model.requests[0].toolSpecifications().map { it.name() } shouldBe listOf("clock")
        }
}
