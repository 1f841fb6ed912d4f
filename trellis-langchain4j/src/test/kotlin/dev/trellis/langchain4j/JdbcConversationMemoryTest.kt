package dev.trellis.langchain4j

import dev.trellis.graph.stateOf
import dev.trellis.runtime.invoke
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import org.sqlite.SQLiteDataSource
import java.nio.file.Path
import javax.sql.DataSource

/** The durable memory on both databases: what a thread recalls, run order, a run saved twice stored once. */
class JdbcConversationMemoryTest {
    private fun check(dataSource: DataSource, table: String) = runBlocking {
        val memory = JdbcConversationMemory(dataSource, table)
        memory.load("ann") shouldBe emptyList()
        val first = listOf(Message.User("I am Ann."), Message.Ai("Hi Ann."))
        memory.save("ann", "run-b", first)
        memory.save("bob", "run-c", listOf(Message.User("I am Bob.")))
        val tool = Message.Ai(null, listOf(ToolCall("1", "clock", "{}")))
        memory.save("ann", "run-a", listOf(Message.User("Time?"), tool, Message.ToolResult("1", "clock", "12:00")))
        memory.save("ann", "run-b", first + Message.User("again")) // saved again: replaced, keeps its place

        memory.load("ann") shouldBe
            first + Message.User("again") +
            listOf(Message.User("Time?"), tool, Message.ToolResult("1", "clock", "12:00"))
        memory.load("bob") shouldBe listOf(Message.User("I am Bob."))

        // a new instance on the same table (another process) sees the same threads, and a thread agent uses them
        val model = ScriptedChatModel(Turn.Text("You are Bob."))
        val chat = threadAgent(reactAgent(model, Tools.from()), JdbcConversationMemory(dataSource, table))
        chat.invoke(stateOf(ThreadState.threadId to "bob", ThreadState.messages to listOf(Message.User("Who am I?"))))
        memory.load("bob").size shouldBe 3
        model.requests.single().messages().size shouldBe 2
    }

    @Test
    fun `on SQLite`(
        @TempDir dir: Path,
    ) {
        val dataSource = SQLiteDataSource().apply { url = "jdbc:sqlite:${dir.resolve("memory.db")}" }
        check(dataSource, "conversation_memory")
    }

    @Test
    fun `on PostgreSQL`() {
        val schema = TestPostgres.newSchema()
        TestPostgres.dataSource.connection.use { c -> c.createStatement().use { it.execute("CREATE SCHEMA $schema") } }
        try {
            check(TestPostgres.dataSource, "$schema.memory")
        } finally {
            TestPostgres.dropSchema(schema)
        }
    }

    @Test
    fun `a table name that is not a plain SQL name is refused`(
        @TempDir dir: Path,
    ) {
        val dataSource = SQLiteDataSource().apply { url = "jdbc:sqlite:${dir.resolve("memory.db")}" }
        shouldThrow<IllegalArgumentException> { JdbcConversationMemory(dataSource, "x; DROP TABLE y") }
    }
}
