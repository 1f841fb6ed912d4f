package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolSpecification
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.output.TokenUsage
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
import kotlinx.serialization.Serializable
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicInteger

@Serializable
data class Score(val value: Int)

object Metered : StateSchema("metered") {
    val question = key<String>("question")
    val answer = key("answer", "")
    val draft = key("draft", "")
    val score = key("score", Score(0))
    val route = key("route", "")
}

class UsageTest {
    private val usage = TokenUsage(100, 10)

    @Test
    fun `every chat node charges its tokens to tokens-input and tokens-output`(): Unit = runBlocking {
        val chat = ScriptedChatModel(Turn.Text("yes"), Turn.Text("""{"value": 3}"""), Turn.Text("done"), usage = usage)
        val streaming = ScriptedStreamingModel(listOf("a", "b"), usage = TokenUsage(7, 2))
        val g =
            graph("metered", Metered) {
                val ask = chatNode("ask", chat, Metered.answer) { listOf(UserMessage.from(it[Metered.question])) }
                val rate = structuredChatNode("rate", chat, Metered.score) { listOf(UserMessage.from("rate")) }
                val write = streamingChatNode("write", streaming, Metered.draft) { listOf(UserMessage.from("go")) }
                val done = node("done") {}
                val route =
                    routerNode("route", chat, Metered.route, mapOf(done to "done")) { listOf(UserMessage.from("go")) }
                start(ask)
                ask then rate
                rate then write
                write then route
            }

        val result = g.invoke(stateOf(Metered.question to "?"))

        result.meters shouldBe mapOf("tokens.input" to 307.0, "tokens.output" to 32.0)
    }

    @Test
    fun `one meter for all tokens and a cost meter priced per million tokens`(): Unit = runBlocking {
        val meters = TokenMeters.builder().tokens("tokens").cost("usd", TokenPrice.perMillionTokens(3.0, 15.0)).build()
        val model = ScriptedChatModel(Turn.Text("a"), Turn.Text("b"), usage = TokenUsage(1_000, 200))
        val g =
            graph("priced", Metered) {
                val one = chatNode("one", model, Metered.answer, meters = meters) { listOf(UserMessage.from("go")) }
                val two = chatNode("two", model, Metered.draft, meters = meters) { listOf(UserMessage.from("go")) }
                start(one)
                one then two
            }

        val result = g.invoke(stateOf(Metered.question to "?"))

        // 2 x (1,000 x 3 + 200 x 15) / 1,000,000 = 0.012
        result.meters shouldBe mapOf("tokens" to 2_400.0, "usd" to 0.012)
    }

    @Test
    fun `a response without token usage charges nothing, and NONE charges nothing`(): Unit = runBlocking {
        val g =
            graph("free", Metered) {
                val one =
                    chatNode(
                        "one",
                        ScriptedChatModel(Turn.Text("a")),
                        Metered.answer,
                    ) { listOf(UserMessage.from("go")) }
                val free = ScriptedChatModel(Turn.Text("b"), usage = usage)
                val two =
                    chatNode("two", free, Metered.draft, meters = TokenMeters.NONE) { listOf(UserMessage.from("go")) }
                start(one)
                one then two
            }
        g.invoke(stateOf(Metered.question to "?")).meters shouldBe emptyMap()
    }

    @Test
    fun `a budget on output tokens stops a ReAct loop, and no tool runs after the crossing call`(): Unit =
        runBlocking {
            val lookups = AtomicInteger()
            val tools =
                Tools.builder().add(
                    ToolSpecification.builder().name("lookup").description("looks up")
                        .build(),
                ) { "found ${lookups.incrementAndGet()}" }.build()
            val call = Turn.Calls(listOf("lookup" to "{}"))
            val model = ScriptedChatModel(call, call, call, call, Turn.Text("done"), usage = usage)
            val agent = reactAgent(model, tools, maxSteps = 10)
            val options = RunOptions(budget = Budget().withMeter("tokens.output", 25.0))

            val error =
                shouldThrow<GraphRunException> {
                    agent.invoke(stateOf(AgentState.messages to listOf(Message.User("?"))), options)
                }

            error.result.status shouldBe Status.FAILED
            val limit = error.cause.shouldBeInstanceOf<LimitExceededException>()
            limit.meter shouldBe "tokens.output"
            limit.nodeId shouldBe "model"
            limit.total shouldBe 30.0
            model.requests.size shouldBe 3 // the third call crossed 25 output tokens
            lookups.get() shouldBe 2 // the tools the third answer asked for never ran
            error.result.meters shouldBe mapOf("tokens.input" to 300.0, "tokens.output" to 30.0)
        }
}
