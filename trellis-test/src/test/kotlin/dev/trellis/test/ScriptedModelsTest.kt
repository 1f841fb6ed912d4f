package dev.trellis.test

import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.request.ChatRequest
import dev.trellis.graph.graph
import dev.trellis.langchain4j.AgentState
import dev.trellis.langchain4j.Tools
import dev.trellis.langchain4j.chatNode
import dev.trellis.langchain4j.reactAgent
import dev.trellis.langchain4j.streamingChatNode
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.NodeTimeoutException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.agent.AgentEvent
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.test.model.ScriptedAnswer
import dev.trellis.test.model.ScriptedChatModel
import dev.trellis.test.model.UnscriptedCallException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.io.IOException
import java.time.Duration
import kotlin.time.Duration.Companion.seconds

class ScriptedModelsTest {
    private fun request(prompt: String) = ChatRequest.builder().messages(UserMessage.from(prompt)).build()

    @Test
    fun `answers in call order, then fails naming the prompt of the unscripted call`() {
        val model = ScriptedChatModel.of("one", "two")
        model.chat(request("first")).aiMessage().text() shouldBe "one"
        model.chat(request("second")).aiMessage().text() shouldBe "two"
        val error = shouldThrow<UnscriptedCallException> { model.chat(request("What is the third?")) }
        error.callNumber shouldBe 3
        error.prompt shouldBe "What is the third?"
        error.message shouldContain "Call 3 to the scripted model was not scripted; its prompt: \"What is the third?\""
        model.prompts shouldContainExactly listOf("first", "second", "What is the third?")
    }

    @Test
    fun `prompt rules win over the sequence, give their answers in turn and repeat the last`() {
        val model = ScriptedChatModel.builder()
            .whenPrompt("Review", ScriptedAnswer.text("REVISE"), ScriptedAnswer.text("ACCEPT"))
            .whenPromptMatches("draft \\d+", ScriptedAnswer.text("a draft"))
            .whenPrompt("number") { r -> ScriptedAnswer.text("length ${r.messages().size}") }
            .answer("plan")
            .build()
        model.chat(request("Plan it")).aiMessage().text() shouldBe "plan"
        model.chat(request("Review 1")).aiMessage().text() shouldBe "REVISE"
        model.chat(request("Review 2")).aiMessage().text() shouldBe "ACCEPT"
        model.chat(request("Review 3")).aiMessage().text() shouldBe "ACCEPT"
        model.chat(request("Write draft 2")).aiMessage().text() shouldBe "a draft"
        model.chat(request("a number")).aiMessage().text() shouldBe "length 1"
        model.assertAllAnswersUsed()
    }

    @Test
    fun `unused answers fail the check, naming them`() {
        val model = ScriptedChatModel.of("one", "two")
        model.chat(request("first"))
        shouldThrow<AssertionError> { model.assertAllAnswersUsed() }.message shouldContain
            "1 answer(s) were never asked for"
    }

    @Test
    fun `json answers are checked when scripted`() {
        ScriptedAnswer.json("""{"category":"billing"}""").toString() shouldContain "billing"
        shouldThrow<IllegalArgumentException> { ScriptedAnswer.json("{not json") }.message shouldContain
            "ScriptedAnswer.json needs a JSON document"
    }

    @Test
    fun `tool calls drive a ReAct agent, whose trajectory shows them`() = runTest {
        val weather = Weather()
        val model = ScriptedChatModel.builder().answer(
            ScriptedAnswer.toolCalls(ScriptedAnswer.call("temperature", """{"city":"Oslo"}""")),
            ScriptedAnswer.text("It is -3 °C in Oslo."),
        ).build()
        val result = reactAgent(model, Tools.from(weather)).invoke(agentInput("Weather in Oslo?"))
        result.state[AgentState.answer] shouldBe "It is -3 °C in Oslo."
        weather.calls.get() shouldBe 1
        model.requests.size shouldBe 2
    }

    @Test
    fun `a failure fails the node`() = runTest {
        val model = ScriptedChatModel.builder().answer(
            ScriptedAnswer.failure(IOException("503 from the model")),
        ).build()
        val error = shouldThrow<GraphRunException> { qaGraph(model).invoke(question("?")) }
        error.cause!!.message shouldBe "503 from the model"
    }

    @Test
    fun `latency is virtual time on the test scheduler, so a node timeout fires without waiting`() = runTest {
        val model = ScriptedChatModel.builder()
            .answer(ScriptedAnswer.text("slow").after(Duration.ofMinutes(5)))
            .virtualTime(testScheduler)
            .build()
        val graph = graph("slow", Qa) {
            start(chatNode("answer", model, Qa.answer, timeout = 10.seconds) { listOf(UserMessage.from("hi")) })
        }
        val events = graph.events(question("?")).toList()
        val failed = events.filterIsInstance<RunEvent.NodeFailed>().single()
        failed.error.shouldBeInstanceOf<NodeTimeoutException>()
    }

    @Test
    fun `latency without a competing timer is the run's virtual duration`() = runTest {
        val model = ScriptedChatModel.builder()
            .answer(ScriptedAnswer.text("slow answer").after(Duration.ofSeconds(30)))
            .virtualTime(testScheduler)
            .build()
        val result = qaGraph(model).invoke(question("?"))
        result.state[Qa.answer] shouldBe "slow answer"
        result.duration shouldBe Duration.ofSeconds(30)
    }

    @Test
    fun `a streaming model streams scripted tokens, and fails half-way when told`() = runTest {
        val model = ScriptedChatModel.builder()
            .answer(ScriptedAnswer.tokens("Hel", "lo ", "world"))
            .answer(ScriptedAnswer.tokens("par", "tial").thenFail(IOException("stream broke")))
            .buildStreaming()
        val graph = graph("stream", Qa) {
            val write = streamingChatNode("write", model, Qa.answer) { listOf(UserMessage.from(it[Qa.question])) }
            start(write)
        }
        val events = graph.events(question("one")).toList()
        events.filterIsInstance<RunEvent.Custom>().map { (it.payload as AgentEvent.Token).text } shouldContainExactly
            listOf("Hel", "lo ", "world")
        (events.last() as RunEvent.Terminal).result.state[Qa.answer] shouldBe "Hello world"
        val error = shouldThrow<GraphRunException> { graph.invoke(question("two")) }
        error.cause!!.message shouldBe "stream broke"
        model.prompts shouldContainExactly listOf("one", "two")
    }
}
