package dev.trellis.springai

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
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import org.springframework.ai.chat.client.ChatClient
import org.springframework.ai.chat.messages.SystemMessage
import org.springframework.ai.chat.messages.UserMessage
import java.util.concurrent.TimeUnit
import kotlin.time.Duration

object Qa : StateSchema("qa") {
    val question = key<String>("question")
    val answer = key("answer", "")
    val history = Conversation.key(this, "history")
}

class ChatNodeTest {
    @Test
    fun `a chat node sends the messages built from the state and writes the answer`(): Unit = runBlocking {
        val model = ScriptedChatModel(Reply.Text("Blue."))
        val qa = graph("qa", Qa) {
            val ask = chatNode("ask", model, output = Qa.answer, conversation = Qa.history) { state ->
                listOf(SystemMessage("Be brief."), UserMessage(state[Qa.question]))
            }
            start(ask)
        }
        val result = qa.invoke(stateOf(Qa.question to "Colour of the sky?"))
        result.state[Qa.answer] shouldBe "Blue."
        result.state[Qa.history] shouldBe listOf(StoredMessage.Ai("Blue."))
        model.prompts.single().instructions.map { it.text } shouldBe listOf("Be brief.", "Colour of the sky?")
    }

    @Test
    fun `a failed model call is retried by the node's retry policy`(): Unit = runBlocking {
        val model = ScriptedChatModel(Reply.Fail(IllegalStateException("rate limited")), Reply.Text("ok"))
        val qa = graph("qa", Qa) {
            start(chatNode("ask", model, Qa.answer, retry = Retry.fixed(2, Duration.ZERO)) { listOf(UserMessage("?")) })
        }
        qa.invoke(stateOf(Qa.question to "q")).state[Qa.answer] shouldBe "ok"
        model.prompts.size shouldBe 2
    }

    @Test
    fun `a chat node through a ChatClient gets the client's defaults`(): Unit = runBlocking {
        val model = ScriptedChatModel(Reply.Text("Hi."))
        val client = ChatClient.builder(model).defaultSystem("You are terse.").build()
        val qa = graph("qa", Qa) { start(chatNode("ask", client, Qa.answer) { listOf(UserMessage(it[Qa.question])) }) }
        qa.invoke(stateOf(Qa.question to "Hello?")).state[Qa.answer] shouldBe "Hi."
        model.prompts.single().instructions.map { it.text } shouldBe listOf("You are terse.", "Hello?")
    }

    @Test
    fun `a streaming node emits each token as an event as it arrives, then writes the whole answer`(): Unit =
        runBlocking {
            val model = ScriptedChatModel(tokens = listOf("The ", "sky ", "is ", "blue."))
            for (write in listOf(
                graph("write", Qa) {
                    start(streamingChatNode("write", model, Qa.answer, Qa.history) { listOf(UserMessage("sky?")) })
                },
                graph("write", Qa) {
                    start(
                        streamingChatNode("write", ChatClient.create(model), Qa.answer, Qa.history) {
                            listOf(UserMessage("sky?"))
                        },
                    )
                },
            )) {
                val events = write.events(stateOf(Qa.question to "sky?")).toList()
                val tokens = events.filterIsInstance<RunEvent.Custom>().map { it.payload }
                tokens shouldBe listOf("The ", "sky ", "is ", "blue.").map { AgentEvent.Token("write", it) }
                val completed = events.indexOfFirst { it is RunEvent.NodeCompleted }
                events.indexOfLast { it is RunEvent.Custom } shouldBe completed - 1
                val result = (events.last() as RunEvent.Terminal).result
                result.state[Qa.answer] shouldBe "The sky is blue."
                result.state[Qa.history] shouldBe listOf(StoredMessage.Ai("The sky is blue."))
            }
        }

    @Test
    fun `a stream that breaks fails the node with the model's error`(): Unit = runBlocking {
        val model = ScriptedChatModel(tokens = listOf("a", "b", "c"), failAfter = 2)
        val write =
            graph("write", Qa) { start(streamingChatNode("write", model, Qa.answer) { listOf(UserMessage("?")) }) }
        val error = shouldThrow<GraphRunException> { write.invoke(stateOf(Qa.question to "q")) }
        error.cause!!.message shouldBe "stream broke after 2 tokens"
    }

    @Test
    fun `cancelling a run while it streams cancels the model's stream and ends the run CANCELLED`(): Unit =
        runBlocking {
            val model = ScriptedChatModel(tokens = listOf("one ", "two ", "three ", "four"), holdAfter = 2)
            val write =
                graph("write", Qa) { start(streamingChatNode("write", model, Qa.answer) { listOf(UserMessage("?")) }) }
            val seen = ArrayList<RunEvent>()
            val twoTokens = CompletableDeferred<Unit>()
            val handle = write.start(this, stateOf(Qa.question to "q")) { event ->
                seen += event
                if (seen.count { it is RunEvent.Custom } == 2) twoTokens.complete(Unit)
            }
            withTimeout(30_000) { twoTokens.await() }
            handle.cancel()
            val result = handle.await()
            result.status shouldBe Status.CANCELLED
            model.cancelled.await(30, TimeUnit.SECONDS) shouldBe true
            seen.filterIsInstance<RunEvent.Custom>().map { it.payload } shouldBe
                listOf(AgentEvent.Token("write", "one "), AgentEvent.Token("write", "two "))
            seen.last() shouldBe seen.filterIsInstance<RunEvent.RunCancelled>().single()
        }

    @Test
    fun `stored messages convert to Spring AI messages and back`() {
        val messages = listOf(
            StoredMessage.System("s"),
            StoredMessage.User("u"),
            StoredMessage.Ai("a", listOf(ToolCall("c1", "temperature", """{"city":"Oslo"}"""))),
            StoredMessage.ToolResult("c1", "temperature", "21 C"),
        )
        StoredMessage.toMessages(messages).map { StoredMessage.of(it) } shouldBe messages
    }
}
