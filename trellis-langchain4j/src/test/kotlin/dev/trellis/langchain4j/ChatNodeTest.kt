package dev.trellis.langchain4j

import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.chat.request.ResponseFormat
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.agent.AgentEvent
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.start
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.Serializable
import org.junit.jupiter.api.Test
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds

@Serializable
data class Verdict(val approved: Boolean, val reason: String)

object Qa : StateSchema("qa") {
    val question = key<String>("question")
    val answer = key("answer", "")
    val history = Conversation.key(this, "history")
    val verdict = key<Verdict?>("verdict", null)
}

class ChatNodeTest {
    @Test
    fun `a chat node sends the messages built from the state and writes the answer`(): Unit = runBlocking {
        val model = ScriptedChatModel(Turn.Text("Blue light scatters more."))
        val qa =
            graph("qa", Qa) {
                val ask =
                    chatNode("ask", model, output = Qa.answer, conversation = Qa.history) { state ->
                        listOf(SystemMessage.from("Be brief."), UserMessage.from(state[Qa.question]))
                    }
                start(ask)
            }
        val result = qa.invoke(stateOf(Qa.question to "Why is the sky blue?"))
        result.state[Qa.answer] shouldBe "Blue light scatters more."
        result.state[Qa.history] shouldBe listOf(Message.Ai("Blue light scatters more."))
        model.requests.single().messages() shouldBe
            listOf(SystemMessage.from("Be brief."), UserMessage.from("Why is the sky blue?"))
    }

    @Test
    fun `a failed model call is retried by the node's retry policy`(): Unit = runBlocking {
        val model = ScriptedChatModel(Turn.Fail(IllegalStateException("rate limited")), Turn.Text("ok"))
        val qa =
            graph("retry", Qa) {
                start(
                    chatNode(
                        "ask",
                        model,
                        Qa.answer,
                        retry = Retry.fixed(2, 1.milliseconds),
                    ) { listOf(UserMessage.from("q")) },
                )
            }
        val result = qa.invoke(stateOf(Qa.question to "q"))
        result.state[Qa.answer] shouldBe "ok"
        result.node("ask").attempts shouldBe 2
    }

    @Test
    fun `structured output is decoded into a typed key, a malformed answer is asked again`(): Unit = runBlocking {
        val model =
            ScriptedChatModel(
                Turn.Text("I think it is fine"),
                Turn.Text("```json\n{\"approved\": true, \"reason\": \"clear\", \"score\": 9}\n```"),
            )
        val review =
            graph("judge", Qa) {
                start(
                    structuredChatNode("judge", model, Qa.verdict, retry = Retry.fixed(2, 1.milliseconds)) {
                        listOf(UserMessage.from("Judge it. Answer {\"approved\": bool, \"reason\": string}"))
                    },
                )
            }
        val result = review.invoke(stateOf(Qa.question to "q"))
        result.state[Qa.verdict] shouldBe Verdict(approved = true, reason = "clear")
        model.requests.first().responseFormat() shouldBe ResponseFormat.JSON
    }

    @Test
    fun `a structured answer that never decodes fails naming the node and the key`(): Unit = runBlocking {
        val model = ScriptedChatModel(Turn.Text("no json here"))
        val review =
            graph(
                "judge",
                Qa,
            ) { start(structuredChatNode("judge", model, Qa.verdict) { listOf(UserMessage.from("?")) }) }
        val error = shouldThrow<GraphRunException> { review.invoke(stateOf(Qa.question to "q")) }
        error.cause!!.message!! shouldContain "Node 'judge' got an answer that is not a"
        error.cause!!.message!! shouldContain "key 'verdict'"
    }

    @Test
    fun `a streaming node emits each token as an event as it arrives, then writes the whole answer`(): Unit =
        runBlocking {
            val model = ScriptedStreamingModel(listOf("The ", "sky ", "is ", "blue."))
            val write =
                graph("write", Qa) {
                    start(
                        streamingChatNode(
                            "write",
                            model,
                            Qa.answer,
                            Qa.history,
                        ) { listOf(UserMessage.from(it[Qa.question])) },
                    )
                }
            val events = write.events(stateOf(Qa.question to "sky?")).toList()
            val tokens = events.filterIsInstance<RunEvent.Custom>().map { it.payload }
            tokens shouldBe listOf("The ", "sky ", "is ", "blue.").map { AgentEvent.Token("write", it) }
            val completed = events.indexOfFirst { it is RunEvent.NodeCompleted }
            events.indexOfLast { it is RunEvent.Custom } shouldBe completed - 1
            val result = (events.last() as RunEvent.Terminal).result
            result.state[Qa.answer] shouldBe "The sky is blue."
            result.state[Qa.history] shouldBe listOf(Message.Ai("The sky is blue."))
        }

    @Test
    fun `a stream that breaks fails the node with the model's error`(): Unit = runBlocking {
        val model = ScriptedStreamingModel(listOf("a", "b", "c"), failAfter = 2)
        val write =
            graph("write", Qa) { start(streamingChatNode("write", model, Qa.answer) { listOf(UserMessage.from("?")) }) }
        val error = shouldThrow<GraphRunException> { write.invoke(stateOf(Qa.question to "q")) }
        error.cause!!.message shouldBe "stream broke after 2 tokens"
    }

    @Test
    fun `cancelling a run while it streams cancels the model's stream and ends the run CANCELLED`(): Unit =
        runBlocking {
            val model = ScriptedStreamingModel(listOf("one ", "two ", "three ", "four"), holdAfter = 2)
            val write =
                graph(
                    "write",
                    Qa,
                ) { start(streamingChatNode("write", model, Qa.answer) { listOf(UserMessage.from("?")) }) }
            val seen = ArrayList<RunEvent>()
            val twoTokens = CompletableDeferred<Unit>()
            val handle =
                write.start(this, stateOf(Qa.question to "q")) { event ->
                    seen += event
                    if (seen.count { it is RunEvent.Custom } == 2) twoTokens.complete(Unit)
                }
            withTimeout(30_000) { twoTokens.await() }
            handle.cancel()
            val result = handle.await()
            result.status shouldBe Status.CANCELLED
            model.cancelled.await(30, TimeUnit.SECONDS) shouldBe true
            model.finished.await(30, TimeUnit.SECONDS) shouldBe true
            seen.filterIsInstance<RunEvent.Custom>().map { it.payload } shouldBe
                listOf(AgentEvent.Token("write", "one "), AgentEvent.Token("write", "two "))
            seen.last() shouldBe seen.filterIsInstance<RunEvent.RunCancelled>().single()
        }
}
