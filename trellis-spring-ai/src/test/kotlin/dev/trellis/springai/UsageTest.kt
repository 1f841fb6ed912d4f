package dev.trellis.springai

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Budget
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.LimitExceededException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.springframework.ai.chat.client.ChatClient
import org.springframework.ai.chat.messages.UserMessage
import org.springframework.ai.tool.definition.ToolDefinition
import java.util.concurrent.atomic.AtomicInteger

object Metered : StateSchema("metered") {
    val question = key<String>("question")
    val answer = key("answer", "")
    val draft = key("draft", "")
    val summary = key("summary", "")
}

class UsageTest {
    @Test
    fun `chat and streaming nodes charge their tokens to tokens-input and tokens-output`(): Unit = runBlocking {
        val chat = ScriptedChatModel(Reply.Text("yes"), Reply.Text("sure"), usage = usage(100, 10))
        val streaming = ScriptedChatModel(tokens = listOf("a", "b"), usage = usage(7, 2))
        val g = graph("metered", Metered) {
            val ask = chatNode("ask", chat, Metered.answer) { listOf(UserMessage(it[Metered.question])) }
            val viaClient = chatNode("client", ChatClient.create(chat), Metered.summary) { listOf(UserMessage("go")) }
            val write = streamingChatNode("write", streaming, Metered.draft) { listOf(UserMessage("go")) }
            start(ask)
            ask then viaClient
            viaClient then write
        }

        val result = g.invoke(stateOf(Metered.question to "?"))

        result.meters shouldBe mapOf("tokens.input" to 207.0, "tokens.output" to 22.0)
        result.state[Metered.draft] shouldBe "ab"
    }

    @Test
    fun `one meter for all tokens and a cost meter priced per million tokens`(): Unit = runBlocking {
        val meters = TokenMeters.builder().tokens("tokens").cost("usd", TokenPrice.perMillionTokens(3.0, 15.0)).build()
        val model = ScriptedChatModel(Reply.Text("a"), Reply.Text("b"), usage = usage(1_000, 200))
        val g = graph("priced", Metered) {
            val one = chatNode("one", model, Metered.answer, meters = meters) { listOf(UserMessage("go")) }
            val two = chatNode("two", model, Metered.draft, meters = meters) { listOf(UserMessage("go")) }
            start(one)
            one then two
        }

        val result = g.invoke(stateOf(Metered.question to "?"))

        // 2 x (1,000 x 3 + 200 x 15) / 1,000,000 = 0.012
        result.meters shouldBe mapOf("tokens" to 2_400.0, "usd" to 0.012)
    }

    @Test
    fun `a response without usage charges nothing, and NONE charges nothing`(): Unit = runBlocking {
        val g = graph("free", Metered) {
            val one = chatNode("one", ScriptedChatModel(Reply.Text("a")), Metered.answer) { listOf(UserMessage("go")) }
            val free = ScriptedChatModel(Reply.Text("b"), usage = usage(100, 10))
            val two = chatNode("two", free, Metered.draft, meters = TokenMeters.NONE) { listOf(UserMessage("go")) }
            start(one)
            one then two
        }
        g.invoke(stateOf(Metered.question to "?")).meters shouldBe emptyMap()
    }

    @Test
    fun `a budget on output tokens stops a ReAct loop, and no tool runs after the crossing call`(): Unit =
        runBlocking {
            val lookups = AtomicInteger()
            val lookup = ToolDefinition.builder().name("lookup").description("looks up").inputSchema("{}").build()
            val tools = Tools.builder().add(lookup) { "found ${lookups.incrementAndGet()}" }.build()
            val call = Reply.Calls(listOf("lookup" to "{}"))
            val model = ScriptedChatModel(call, call, call, call, Reply.Text("done"), usage = usage(100, 10))
            val agent = reactAgent(model, tools, maxSteps = 10)
            val options = RunOptions(budget = Budget().withMeter("tokens.output", 25.0))

            val error = shouldThrow<GraphRunException> {
                agent.invoke(stateOf(AgentState.messages to listOf(StoredMessage.User("?"))), options)
            }

            error.result.status shouldBe Status.FAILED
            val limit = error.cause.shouldBeInstanceOf<LimitExceededException>()
            limit.meter shouldBe "tokens.output"
            limit.nodeId shouldBe "model"
            limit.total shouldBe 30.0
            model.prompts.size shouldBe 3 // the third call crossed 25 output tokens
            lookups.get() shouldBe 2 // the tools the third answer asked for never ran
            error.result.meters shouldBe mapOf("tokens.input" to 300.0, "tokens.output" to 30.0)
        }
}
