package dev.trellis.mcp

import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.langchain4j.model.chat.request.json.JsonEnumSchema
import dev.langchain4j.model.chat.request.json.JsonIntegerSchema
import dev.langchain4j.model.chat.request.json.JsonStringSchema
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.Retry
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.AgentState
import dev.trellis.langchain4j.Message
import dev.trellis.langchain4j.ScriptedChatModel
import dev.trellis.langchain4j.Turn
import dev.trellis.langchain4j.reactAgent
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.agent.AgentEvent
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.ints.shouldBeGreaterThan
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
import java.io.File
import java.nio.file.Path
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.time.Duration
import java.time.Duration as JavaDuration

/** MCP tools: a real MCP server (the SDK's server API, [McpTestServer]) in a child JVM, over stdio. */
class McpToolsTest {
    private fun question(text: String) = stateOf(AgentState.messages to listOf(Message.User(text)))

    private fun File.calls(): List<String> = if (exists()) readLines() else emptyList()

    @Test
    fun `the server's tools are LangChain4j specifications with their schemas`(
        @TempDir dir: Path,
    ) {
        startTestServer(dir.resolve("calls.log").toFile()).use { mcp ->
            mcp.names shouldContainExactly listOf("temperature", "add", "lookup", "crash")
            val temperature = mcp.specifications.first()
            temperature.description() shouldBe "Current temperature in a city"
            val parameters = temperature.parameters()
            parameters.required() shouldContainExactly listOf("city", "unit")
            (parameters.properties()["city"] as JsonStringSchema).description() shouldBe "the city"
            (parameters.properties()["unit"] as JsonEnumSchema).enumValues() shouldContainExactly
                listOf("CELSIUS", "FAHRENHEIT")
            mcp.specifications[1].parameters().properties()["a"]!!.javaClass shouldBe JsonIntegerSchema::class.java
            mcp.call("add", """{"a": 2, "b": 3}""") shouldBe "5"
        }
    }

    @Test
    fun `a ReAct agent calls the server's tools as map tasks, visible in events`(
        @TempDir dir: Path,
    ): Unit =
        runBlocking {
            val log = dir.resolve("calls.log").toFile()
            startTestServer(log).use { mcp ->
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
                result.state[AgentState.answer] shouldBe "Paris is 21 C, and 20 + 1 = 21."
                val started = events.filterIsInstance<RunEvent.NodeStarted>().map { it.path }
                started shouldContainExactly listOf("model", "tools", started[2], started[3], "model")
                started.subList(2, 4).sorted() shouldBe listOf("tools[0]", "tools[1]") // in parallel: either first
                events.filterIsInstance<RunEvent.Custom>().map { (it.payload as AgentEvent.Step).description }
                    .sorted() shouldBe
                    listOf("""add({"a": 20, "b": 1})""", """temperature({"city": "Paris", "unit": "CELSIUS"})""")
                model.requests[0].toolSpecifications().map { it.name() } shouldBe mcp.names
                model.requests[1].messages().filterIsInstance<ToolExecutionResultMessage>().map { it.text() } shouldBe
                    listOf("Paris: 21 C", "21")
                log.calls().sorted() shouldBe listOf("add", "temperature Paris")
            }
        }

    @Test
    fun `a tool's error result is given to the model, or fails the attempt with failOnToolError`(
        @TempDir dir: Path,
    ): Unit = runBlocking {
        val log = dir.resolve("calls.log").toFile()
        startTestServer(log).use { mcp ->
            val model = ScriptedChatModel(Turn.Calls(listOf("lookup" to """{"city": "Atlantis"}""")), Turn.Text("?"))
            reactAgent(model, mcp.tools).invoke(question("Where is Atlantis?"))
            model.requests[1].messages().filterIsInstance<ToolExecutionResultMessage>().single().text() shouldBe
                "Error: no city named Atlantis"
        }
        val (java, args) = serverCommand()
        val classPath = args[args.indexOf("-cp") + 1] // longer than 120 characters: shown by its start and end
        classPath.length shouldBeGreaterThan 120
        McpTools.stdio(java, *args).env("TRELLIS_MCP_LOG", log.path).failOnToolError()
            .initializationTimeout(JavaDuration.ofSeconds(120)).start().use { mcp ->
                val model = ScriptedChatModel(Turn.Calls(listOf("lookup" to """{"city": "Atlantis"}""")))
                val error =
                    shouldThrow<GraphRunException> {
                        reactAgent(model, mcp.tools, toolRetry = Retry.fixed(2, Duration.ZERO))
                            .invoke(question("Where is Atlantis?"))
                    }
                error.cause!!.message shouldBe
                    "Tool 'lookup' of MCP server '$java ${args.take(4).joinToString(" ")} ${classPath.take(60)}…" +
                    "${classPath.takeLast(30)} ${args.last()}' answered with an " +
                    "error: no city named Atlantis"
                log.calls() shouldBe List(3) { "lookup Atlantis" } // once given to the model, then twice (retried)
            }
    }

    @Test
    fun `a call of a tool the server does not have, or of a server that died, fails naming the server`(
        @TempDir dir: Path,
    ) {
        startTestServer(dir.resolve("calls.log").toFile()).use { mcp ->
            val unknown = shouldThrow<McpToolException> { mcp.call("forecast", "{}") }
            unknown.message!! shouldContain "refused the call of tool 'forecast'"
            val died = shouldThrow<McpToolException> { mcp.call("crash", "{}") }
            died.message!! shouldStartWith "MCP server '"
            died.message!! shouldContain "ended (process "
            died.message!! shouldContain "before it answered the call of tool 'crash'"
            // Later calls fail at once too; the server's last words reach the message as soon as they are read.
            var later = ""
            while ("test server: crashing on purpose" !in later) {
                later = shouldThrow<McpToolException> { mcp.call("add", """{"a": 1, "b": 1}""") }.message!!
                later shouldContain "before it answered the call of tool 'add'"
            }
        }
    }

    @Test
    fun `calls from many threads at once each get their own answer`(
        @TempDir dir: Path,
    ) {
        startTestServer(dir.resolve("calls.log").toFile()).use { mcp ->
            val pool = Executors.newFixedThreadPool(8)
            try {
                // Answers sent at the same moment must all reach the client (none dropped, none given to another call).
                val calls = (1..400).map { n -> pool.submit<String> { mcp.call("add", """{"a": $n, "b": 1000}""") } }
                calls.map { it.get(120, TimeUnit.SECONDS) } shouldBe (1..400).map { "${it + 1000}" }
            } finally {
                pool.shutdownNow()
            }
        }
    }

    @Test
    fun `maxConcurrentCalls holds a call back until the server has answered the one before`(
        @TempDir dir: Path,
    ) {
        val log = dir.resolve("calls.log").toFile()
        val (command, args) = serverCommand()
        shouldThrow<IllegalArgumentException> { McpTools.stdio(command, *args).maxConcurrentCalls(0) }.message shouldBe
            "maxConcurrentCalls must be at least 1, not 0 (1 sends the calls one at a time)."
        McpTools.stdio(command, *args).env("TRELLIS_MCP_LOG", log.path).env("TRELLIS_MCP_HOLD", "Rome")
            .maxConcurrentCalls(1).initializationTimeout(JavaDuration.ofSeconds(120)).start().use { mcp ->
                val pool = Executors.newFixedThreadPool(2)
                try {
                    val rome =
                        pool.submit<String> { mcp.call("temperature", """{"city": "Rome", "unit": "CELSIUS"}""") }
                    while (log.calls().isEmpty()) Thread.sleep(5) // Rome's call is at the server, which holds it
                    val add = pool.submit<String> { mcp.call("add", """{"a": 2, "b": 3}""") }
                    Thread.sleep(300)
                    add.isDone shouldBe false // waiting its turn, not at the server
                    log.calls() shouldBe listOf("temperature Rome")
                    rome.cancel(true) // the interrupted call stops waiting and gives its turn away
                    add.get(120, TimeUnit.SECONDS) shouldBe "5"
                    log.calls() shouldBe listOf("temperature Rome", "add")
                } finally {
                    pool.shutdownNow()
                }
            }
    }

    @Test
    fun `a server slower to start than the request timeout starts within the initialization timeout`(
        @TempDir dir: Path,
    ) {
        val (command, args) = serverCommand()
        McpTools.stdio(command, *args).env("TRELLIS_MCP_LOG", dir.resolve("calls.log").toString())
            .env("TRELLIS_MCP_START_DELAY_MS", "2500").requestTimeout(JavaDuration.ofSeconds(1))
            .initializationTimeout(JavaDuration.ofSeconds(120)).start().use { mcp ->
                // The server answered `initialize` 2.5 s after it started: only the initialization timeout applied.
                mcp.call("add", """{"a": 2, "b": 3}""") shouldBe "5"
            }
    }

    @Test
    fun `a call the server does not answer within the request timeout fails naming the tool`(
        @TempDir dir: Path,
    ) {
        val (command, args) = serverCommand()
        McpTools.stdio(command, *args).env("TRELLIS_MCP_LOG", dir.resolve("calls.log").toString())
            .env("TRELLIS_MCP_HOLD", "Rome").requestTimeout(JavaDuration.ofSeconds(1))
            .initializationTimeout(JavaDuration.ofSeconds(120)).start().use { mcp ->
                // Rome's temperature never comes: whatever the load, the call can only end by the timeout.
                val error =
                    shouldThrow<McpToolException> { mcp.call("temperature", """{"city": "Rome", "unit": "CELSIUS"}""") }
                error.message!! shouldContain "did not answer the call of tool 'temperature'"
            }
    }

    @Test
    fun `a server that does not start fails start, and only names tools the server must have`(
        @TempDir dir: Path,
    ) {
        val (java, _) = serverCommand()
        val error =
            shouldThrow<McpToolException> {
                McpTools.stdio(java, "-cp", dir.toString(), "NoSuchServer")
                    .initializationTimeout(JavaDuration.ofSeconds(120)).start()
            }
        error.message!! shouldStartWith "MCP server '$java -cp $dir NoSuchServer' did not start or did not answer"
        val (command, args) = serverCommand()
        val missing =
            shouldThrow<IllegalArgumentException> {
                McpTools.stdio(command, *args).only("add", "forecast")
                    .initializationTimeout(JavaDuration.ofSeconds(120)).start()
            }
        missing.message!! shouldContain "has no tool named [forecast]; its tools are [temperature, add, lookup, crash]."
        McpTools.stdio(command, *args).only("add").initializationTimeout(JavaDuration.ofSeconds(120)).start()
            .use { it.names shouldBe listOf("add") }
    }

    @Test
    fun `a run stopped in the middle of its MCP calls resumes without repeating a completed call`(
        @TempDir dir: Path,
    ): Unit = runBlocking {
        val log = dir.resolve("calls.log").toFile()
        val db = dir.resolve("runs.db")
        val calls =
            Turn.Calls(
                listOf(
                    "temperature" to """{"city": "Paris", "unit": "CELSIUS"}""",
                    "temperature" to """{"city": "Rome", "unit": "FAHRENHEIT"}""",
                ),
            )
        val store = SqliteCheckpointStore(db)
        startTestServer(log, hold = "Rome").use { mcp ->
            val options = RunOptions(runId = "mcp-trip", checkpointing = Checkpointing(store))
            val running = async { reactAgent(ScriptedChatModel(calls), mcp.tools).invoke(question("?"), options) }
            // Paris's call ended and its task record is stored while Rome's hangs in the server: then we "crash".
            withTimeout(120_000) {
                while ("temperature Rome" !in log.calls() || store.history("mcp-trip").size < 4) delay(10)
            }
            running.cancelAndJoin()
        }

        startTestServer(log).use { mcp ->
            val model = ScriptedChatModel(Turn.Text("Both warm."))
            val resumed =
                reactAgent(model, mcp.tools)
                    .resume("mcp-trip", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))))
            resumed.status shouldBe Status.COMPLETED
            resumed.state[AgentState.answer] shouldBe "Both warm."
            log.calls().count { it == "temperature Paris" } shouldBe 1 // completed before the stop: never again
            log.calls().count { it == "temperature Rome" } shouldBe 2 // running at the stop: at-least-once
            model.requests.single().messages().filterIsInstance<ToolExecutionResultMessage>().map { it.text() } shouldBe
                listOf("Paris: 21 C", "Rome: 21 F")
        }
    }
}
