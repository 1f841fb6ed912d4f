package dev.trellis.mcp

import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.AgentState
import dev.trellis.langchain4j.Message
import dev.trellis.langchain4j.ScriptedChatModel
import dev.trellis.langchain4j.Turn
import dev.trellis.langchain4j.reactAgent
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.net.ServerSocket
import java.nio.file.Path
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import java.util.function.Supplier

/** MCP tools over streamable HTTP and SSE: a server built with the SDK's servlet transports, in Jetty on loopback. */
class McpHttpTest {
    private fun question(text: String) = stateOf(AgentState.messages to listOf(Message.User(text)))

    private fun McpTools.Builder.patient() =
        initializationTimeout(Duration.ofSeconds(60)).requestTimeout(Duration.ofSeconds(60))

    @Test
    fun `a ReAct agent calls the tools of a server that wants a token, as map tasks`(): Unit = runBlocking {
        HttpTestServer(token = "s3cret").use { server ->
            McpTools.http(server.url).header("Authorization", "Bearer s3cret").patient().start().use { mcp ->
                mcp.names shouldContainExactly listOf("temperature", "add", "lookup", "crash")
                val model =
                    ScriptedChatModel(
                        Turn.Calls(
                            listOf(
                                "temperature" to """{"city": "Paris", "unit": "CELSIUS"}""",
                                "add" to """{"a": 20, "b": 1}""",
                            ),
                        ),
                        Turn.Text("Paris is 21 C, and 20 + 1 = 21."),
                    )
                val agent = reactAgent(model, mcp.tools, maxSteps = 3)
                val events = agent.events(question("Weather, and 20 + 1?")).toList()
                val result = (events.last() as RunEvent.Terminal).result
                result.status shouldBe Status.COMPLETED
                events.filterIsInstance<RunEvent.NodeStarted>().map { it.path }.filter { it.startsWith("tools[") }
                    .sorted() shouldBe listOf("tools[0]", "tools[1]")
                model.requests[1].messages().filterIsInstance<ToolExecutionResultMessage>().map { it.text() } shouldBe
                    listOf("Paris: 21 C", "21")
                server.calls.sorted() shouldBe listOf("add", "temperature Paris")
                server.authorizations.shouldNotBeEmpty()
                server.authorizations.toSet() shouldBe setOf("Bearer s3cret")
            }
        }
    }

    @Test
    fun `headers from a supplier are asked for each request, and a refused token fails naming the credentials`() {
        HttpTestServer(token = "s3cret").use { server ->
            val asked = AtomicInteger()
            val tokens = Supplier { mapOf("Authorization" to "Bearer s3cret").also { asked.incrementAndGet() } }
            McpTools.http(server.url).headers(tokens).patient().start().use { mcp ->
                val before = asked.get()
                mcp.call("add", """{"a": 2, "b": 3}""") shouldBe "5"
                (asked.get() > before) shouldBe true
            }
            val refused =
                shouldThrow<McpToolException> {
                    McpTools.http(server.url).header("Authorization", "Bearer nope").patient().start()
                }
            refused.message!! shouldStartWith "MCP server '${server.url}' did not start or did not answer within PT1M"
            refused.message!! shouldContain "Authorization"
        }
    }

    @Test
    fun `a restarted server gets a new session, and a server that is down fails the call until it is back`() {
        val first = HttpTestServer()
        val port = first.port
        McpTools.http(first.url).patient().start().use { mcp ->
            mcp.call("add", """{"a": 1, "b": 1}""") shouldBe "2"
            first.close()
            HttpTestServer(port = port).use { second ->
                // The new server does not know the session: the call is sent again on a new one, and runs once.
                mcp.call("add", """{"a": 2, "b": 2}""") shouldBe "4"
                second.calls shouldBe listOf("add")
            }
            val down = shouldThrow<McpToolException> { mcp.call("add", """{"a": 3, "b": 3}""") }
            down.message!! shouldStartWith
                "MCP server 'http://127.0.0.1:$port/mcp' did not answer the call of tool 'add'"
            HttpTestServer(port = port).use { third ->
                mcp.call("add", """{"a": 4, "b": 4}""") shouldBe "8"
                third.calls shouldBe listOf("add")
            }
        }
    }

    @Test
    fun `a call not answered within the request timeout fails, and an unreachable server fails start at once`() {
        HttpTestServer(hold = "Rome").use { server ->
            McpTools.http(server.url).initializationTimeout(Duration.ofSeconds(60))
                .requestTimeout(Duration.ofSeconds(1)).start().use { mcp ->
                    val error =
                        shouldThrow<McpToolException> {
                            mcp.call("temperature", """{"city": "Rome", "unit": "CELSIUS"}""")
                        }
                    error.message!! shouldContain "did not answer the call of tool 'temperature'"
                    mcp.call("add", """{"a": 2, "b": 3}""") shouldBe "5" // the session is still good
                }
        }
        val closed = ServerSocket(0).use { it.localPort }
        val error =
            shouldThrow<McpToolException> {
                McpTools.http("http://127.0.0.1:$closed/mcp").connectTimeout(Duration.ofSeconds(5)).patient().start()
            }
        error.message!! shouldStartWith "MCP server 'http://127.0.0.1:$closed/mcp' did not start or did not answer"
    }

    @Test
    fun `a server that offers only SSE is reached with McpTools sse`() {
        HttpTestServer(sse = true).use { server ->
            McpTools.sse(server.url).patient().start().use { mcp ->
                mcp.names shouldContainExactly listOf("temperature", "add", "lookup", "crash")
                mcp.call("add", """{"a": 40, "b": 2}""") shouldBe "42"
                mcp.readResource("file:///guides/mcp.md") shouldBe "# MCP\nTools, resources and prompts."
            }
        }
    }

    @Test
    fun `options of the other kind of server fail naming the right ones`() {
        shouldThrow<IllegalArgumentException> { McpTools.http("http://localhost:1/mcp").args("-v") }.message shouldBe
            "args is for a server started as a child process (McpTools.stdio), not for http://localhost:1/mcp; a " +
            "remote server takes header(...) and connectTimeout(...)."
        shouldThrow<IllegalArgumentException> { McpTools.stdio("server").header("X-Key", "1") }.message shouldBe
            "header is for a remote server (McpTools.http or McpTools.sse), not for the child process 'server'; a " +
            "child process takes args(...) and env(...)."
        shouldThrow<IllegalArgumentException> { McpTools.http("localhost:8080/mcp") }.message shouldBe
            "An MCP server's URL starts with http:// or https://, not 'localhost:8080/mcp' " +
            "(for example http://localhost:8080/mcp)."
    }

    @Test
    fun `a run stopped in the middle of its HTTP calls resumes without repeating a completed call`(
        @TempDir dir: Path,
    ): Unit = runBlocking {
        val db = dir.resolve("runs.db")
        val calls =
            Turn.Calls(
                listOf(
                    "temperature" to """{"city": "Paris", "unit": "CELSIUS"}""",
                    "temperature" to """{"city": "Rome", "unit": "FAHRENHEIT"}""",
                ),
            )
        val store = SqliteCheckpointStore(db)
        HttpTestServer(hold = "Rome").use { server ->
            McpTools.http(server.url).patient().start().use { mcp ->
                val options = RunOptions(runId = "mcp-http-trip", checkpointing = Checkpointing(store))
                val running = async { reactAgent(ScriptedChatModel(calls), mcp.tools).invoke(question("?"), options) }
                // Paris's call ended and its task record is stored while Rome's hangs in the server: then we "crash".
                withTimeout(120_000) {
                    while ("temperature Rome" !in server.calls || store.history("mcp-http-trip").size < 4) delay(10)
                }
                running.cancelAndJoin()
                server.calls.sorted() shouldBe listOf("temperature Paris", "temperature Rome")
            }
        }
        HttpTestServer().use { server ->
            McpTools.http(server.url).patient().start().use { mcp ->
                val model = ScriptedChatModel(Turn.Text("Both warm."))
                val resumed =
                    reactAgent(model, mcp.tools)
                        .resume("mcp-http-trip", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))))
                resumed.status shouldBe Status.COMPLETED
                server.calls shouldBe listOf("temperature Rome") // Paris completed before the stop: never again
                val results = model.requests.single().messages().filterIsInstance<ToolExecutionResultMessage>()
                results.map { it.text() } shouldBe listOf("Paris: 21 C", "Rome: 21 F")
            }
        }
    }
}
