package dev.trellis.langchain4j

import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.data.message.UserMessage
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Path

class MemoryTest {
    private fun say(thread: String, text: String) =
        stateOf(ThreadState.threadId to thread, ThreadState.messages to listOf(Message.User(text)))

    private fun chat(model: ScriptedChatModel, memory: ConversationMemory, window: Int = 20): Graph =
        threadAgent(reactAgent(model, Tools.from(), system = "Be brief."), memory, window)

    @Test
    fun `a thread's earlier messages come before the run's own, other threads see nothing`(): Unit = runBlocking {
        val memory = InMemoryConversationMemory()
        val model = ScriptedChatModel(Turn.Text("Hi Ann."), Turn.Text("You are Ann."), Turn.Text("I don't know."))
        val first = chat(model, memory).invoke(say("ann", "I am Ann."))
        first.state[ThreadState.answer] shouldBe "Hi Ann."
        first.state[ThreadState.messages] shouldBe listOf(Message.User("I am Ann."), Message.Ai("Hi Ann."))

        val second = chat(model, memory).invoke(say("ann", "Who am I?"))
        second.state[ThreadState.answer] shouldBe "You are Ann."
        model.requests[1].messages().drop(1) shouldBe
            listOf(
                UserMessage.from("I am Ann."),
                AiMessage.from("Hi Ann."),
                UserMessage.from("Who am I?"),
            )
        chat(model, memory).invoke(say("bob", "Who am I?"))
        model.requests[2].messages().drop(1) shouldBe listOf(UserMessage.from("Who am I?"))
        memory.load("ann").size shouldBe 4
        memory.load("bob").size shouldBe 2
    }

    @Test
    fun `the window keeps the last messages from a user message, so no tool result loses its call`() {
        val call = Message.Ai(null, listOf(ToolCall("1", "t", "{}")))
        val result = Message.ToolResult("1", "t", "ok")
        val thread = listOf(Message.User("a"), call, result, Message.Ai("A"), Message.User("b"), Message.Ai("B"))
        windowOf(thread, 6) shouldBe thread
        windowOf(thread, 4) shouldBe listOf(Message.User("b"), Message.Ai("B")) // would start at the tool result
        windowOf(thread, 1) shouldBe emptyList()
        windowOf(thread, 0) shouldBe emptyList()
    }

    @Test
    fun `a run resumed after a crash recalls the same history and saves its messages once`(
        @TempDir dir: Path,
    ): Unit =
        runBlocking {
            val db = dir.resolve("runs.db")
            val memory = InMemoryConversationMemory()
            memory.save("ann", "earlier", listOf(Message.User("I am Ann."), Message.Ai("Hi Ann.")))
            val hanging = ScriptedChatModel(Turn.Hang)
            val options = RunOptions(runId = "ann-2", checkpointing = Checkpointing(SqliteCheckpointStore(db)))
            val running = async { chat(hanging, memory).invoke(say("ann", "Who am I?"), options) }
            withTimeout(30_000) { while (hanging.requests.isEmpty()) delay(5) } // the model call is under way
            running.cancelAndJoin()
            // meanwhile another run of the thread saved more: the resumed run keeps the history it recalled
            memory.save("ann", "other", listOf(Message.User("I like tea."), Message.Ai("Noted.")))

            val model = ScriptedChatModel(Turn.Text("You are Ann."))
            val resumed =
                chat(
                    model,
                    memory,
                ).resume("ann-2", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))))

            resumed.status shouldBe Status.COMPLETED
            model.requests.single().messages().drop(1) shouldBe
                listOf(UserMessage.from("I am Ann."), AiMessage.from("Hi Ann."), UserMessage.from("Who am I?"))
            memory.save("ann", "ann-2", resumed.state[ThreadState.messages]) // saving a run again replaces it
            memory.load("ann").map { (it as? Message.User)?.text ?: (it as Message.Ai).text } shouldBe
                listOf("I am Ann.", "Hi Ann.", "I like tea.", "Noted.", "Who am I?", "You are Ann.")
        }

    @Test
    fun `only agents over AgentState can be given memory`() {
        val other = dev.trellis.graph.graph("g", Desk) { start(node("n") {}) }
        shouldThrow<IllegalArgumentException> { threadAgent(other, InMemoryConversationMemory()) }
            .message shouldContain "over AgentState"
    }
}
