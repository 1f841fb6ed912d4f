package dev.trellis.springai

import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.Retry
import dev.trellis.graph.stateOf
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
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import org.springframework.ai.chat.messages.ToolResponseMessage
import org.springframework.ai.model.tool.ToolCallingChatOptions
import org.springframework.ai.tool.annotation.Tool
import org.springframework.ai.tool.annotation.ToolParam
import org.springframework.ai.tool.definition.ToolDefinition
import java.nio.file.Path
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/** Tools whose executions are counted per city, across runs and resumes. */
class Weather {
    val executions = ConcurrentHashMap<String, AtomicInteger>()

    /** Set by a test: the tool waits on it (a call cut off by a crash), until the thread is interrupted. */
    @Volatile var holdCity: String? = null
    val held = CountDownLatch(1)

    @Volatile var barrier: CyclicBarrier? = null

    @Tool(description = "Current temperature in a city")
    fun temperature(
        @ToolParam(description = "the city") city: String,
    ): String {
        executions.computeIfAbsent(city) { AtomicInteger() }.incrementAndGet()
        barrier?.await(30, TimeUnit.SECONDS)
        if (city == holdCity) {
            held.countDown()
            Thread.sleep(Long.MAX_VALUE)
        }
        return "$city: 21 C"
    }

    fun count(city: String): Int = executions[city]?.get() ?: 0
}

class Mailer {
    val sent = AtomicInteger()

    @Tool(description = "Sends an e-mail")
    fun send(
        @ToolParam(description = "address") to: String,
        @ToolParam(description = "text") body: String,
    ): String {
        sent.incrementAndGet()
        return "sent to $to"
    }
}

class Forecast {
    @Tool(description = "Tomorrow's forecast for a city")
    fun forecast(
        @ToolParam(description = "the city") city: String,
    ): String = "Sunny in $city"
}

class ToolCallingTest {
    private val parisAndRome = Reply.Calls(
        listOf("temperature" to """{"city": "Paris"}""", "temperature" to """{"city": "Rome"}"""),
    )

    private fun question(text: String) = stateOf(AgentState.messages to listOf(StoredMessage.User(text)))

    /** The texts of the tool results a prompt carries. */
    private fun toolResults(prompt: org.springframework.ai.chat.prompt.Prompt): List<String> =
        prompt.instructions.filterIsInstance<ToolResponseMessage>().flatMap { it.responses }.map { it.responseData() }

    @Test
    fun `tool calls of one answer run as parallel map tasks, visible in events, results in call order`(): Unit =
        runBlocking {
            val weather = Weather().apply { barrier = CyclicBarrier(2) } // each call waits for the other: parallel
            val model = ScriptedChatModel(parisAndRome, Reply.Text("Paris and Rome: 21 C."))
            val agent = reactAgent(model, Tools.from(weather), maxSteps = 3, system = "Use tools.")

            val events = agent.events(question("Weather?")).toList()
            val result = (events.last() as RunEvent.Terminal).result
            result.status shouldBe Status.COMPLETED
            result.state[AgentState.answer] shouldBe "Paris and Rome: 21 C."
            result.state[AgentState.steps] shouldBe 2
            val started = events.filterIsInstance<RunEvent.NodeStarted>().map { it.path }
            started.take(2) shouldContainExactly listOf("model", "tools")
            started.subList(2, 4) shouldContainExactlyInAnyOrder listOf("tools[0]", "tools[1]")
            started.drop(4) shouldContainExactly listOf("model")
            val steps = events.filterIsInstance<RunEvent.Custom>().map { (it.payload as AgentEvent.Step).description }
            steps.sorted() shouldBe listOf("""temperature({"city": "Paris"})""", """temperature({"city": "Rome"})""")
            val second = model.prompts[1]
            second.instructions.first().text shouldBe "Use tools."
            toolResults(second).map { it.trim('"') } shouldBe listOf("Paris: 21 C", "Rome: 21 C")
            // The model is given the tools; Trellis, not Spring AI, runs them.
            val options = second.options as ToolCallingChatOptions
            options.toolCallbacks!!.map { it.toolDefinition.name() } shouldBe listOf("temperature")
        }

    @Test
    fun `a ReAct agent runs the tools of an object's @Tool methods`(): Unit = runBlocking {
        val model = ScriptedChatModel(Reply.Calls(listOf("forecast" to """{"city": "Oslo"}""")), Reply.Text("Sunny."))
        val agent = reactAgent(model, Tools.from(Forecast()), maxSteps = 5)
        val result = agent.invoke(stateOf(AgentState.messages to listOf(StoredMessage.User("Weather in Oslo?"))))
        result.state[AgentState.answer] shouldBe "Sunny."
        toolResults(model.prompts[1]).map { it.trim('"') } shouldBe listOf("Sunny in Oslo")
        model.prompts.size shouldBe 2
    }

    @Test
    fun `a failing tool call is retried like any node, the other calls are not`(): Unit = runBlocking {
        val flaky = AtomicInteger()
        val weather = Weather()
        val definition = ToolDefinition.builder().name("flaky").description("fails once").inputSchema("{}").build()
        val tools = Tools.builder()
            .add(definition) { if (flaky.incrementAndGet() == 1) error("timeout") else "ok" }
            .add(weather)
            .build()
        val model = ScriptedChatModel(
            Reply.Calls(listOf("flaky" to "{}", "temperature" to """{"city":"Oslo"}""")),
            Reply.Text("done"),
        )
        val result = reactAgent(
            model,
            tools,
            toolRetry = Retry.fixed(2, kotlin.time.Duration.ZERO),
        ).invoke(question("?"))
        result.state[AgentState.answer] shouldBe "done"
        flaky.get() shouldBe 2 // the failed call ran again
        weather.count("Oslo") shouldBe 1 // the other call did not
    }

    @Test
    fun `a model that calls an unknown tool fails the call naming the tools there are`(): Unit = runBlocking {
        val model = ScriptedChatModel(Reply.Calls(listOf("forecast" to "{}")))
        val error = shouldThrow<GraphRunException> { reactAgent(model, Tools.from(Weather())).invoke(question("?")) }
        error.cause!!.message shouldBe
            "The model called tool 'forecast', which is not among the tools given ([temperature]); add it to the " +
            "Tools, or tell the model which tools it has."
    }

    @Test
    fun `the step budget stops a model that keeps asking for tools, before its tools run`(): Unit = runBlocking {
        val weather = Weather()
        val model = ScriptedChatModel(parisAndRome, parisAndRome, parisAndRome)
        val error = shouldThrow<GraphRunException> {
            reactAgent(model, Tools.from(weather), maxSteps = 2).invoke(question("?"))
        }
        val budget = error.cause as StepBudgetExceededException
        budget.maxSteps shouldBe 2
        budget.requested shouldBe listOf("temperature", "temperature")
        weather.count("Paris") shouldBe 1
        model.prompts.size shouldBe 2
    }

    @Test
    fun `a run stopped in the middle of its tool calls resumes without repeating a completed call`(
        @TempDir dir: Path,
    ): Unit = runBlocking {
        val db = dir.resolve("runs.db")
        val weather = Weather().apply { holdCity = "Rome" }
        val first = reactAgent(ScriptedChatModel(parisAndRome), Tools.from(weather))
        val store = SqliteCheckpointStore(db)
        val options = RunOptions(runId = "trip", checkpointing = Checkpointing(store))
        val running = async { first.invoke(question("Weather?"), options) }
        // Paris's call ended (its task record is stored) while Rome's hangs: then the process "dies".
        withTimeout(30_000) {
            while (!weather.held.await(0, TimeUnit.SECONDS) || weather.count("Paris") < 1 ||
                store.history("trip").size < 4
            ) {
                delay(5)
            }
        }
        running.cancelAndJoin()

        // Another process: a new graph, a new model that answers after the tools, the same database.
        weather.holdCity = null
        val model = ScriptedChatModel(Reply.Text("Paris and Rome are warm."))
        val resumed = reactAgent(model, Tools.from(weather))
            .resume("trip", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))))
        resumed.status shouldBe Status.COMPLETED
        resumed.state[AgentState.answer] shouldBe "Paris and Rome are warm."
        weather.count("Paris") shouldBe 1 // completed before the stop: never again
        weather.count("Rome") shouldBe 2 // running at the stop: at-least-once
        toolResults(model.prompts.single()).map { it.trim('"') } shouldBe listOf("Paris: 21 C", "Rome: 21 C")
    }

    @Test
    fun `a run stopped between the tool calls and the next model call runs no tool again`(
        @TempDir dir: Path,
    ): Unit = runBlocking {
        val db = dir.resolve("runs.db")
        val weather = Weather()
        val hanging = ScriptedChatModel(parisAndRome, Reply.Hang)
        val options = RunOptions(runId = "trip2", checkpointing = Checkpointing(SqliteCheckpointStore(db)))
        val running = async { reactAgent(hanging, Tools.from(weather)).invoke(question("Weather?"), options) }
        withTimeout(30_000) { while (hanging.prompts.size < 2) delay(5) } // the second model call is under way
        running.cancelAndJoin()

        val model = ScriptedChatModel(Reply.Text("warm"))
        val resumed = reactAgent(model, Tools.from(weather))
            .resume("trip2", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))))
        resumed.state[AgentState.answer] shouldBe "warm"
        weather.count("Paris") shouldBe 1
        weather.count("Rome") shouldBe 1
        resumed.state[AgentState.messages].map { it::class.simpleName } shouldBe
            listOf("User", "Ai", "ToolResult", "ToolResult", "Ai")
    }

    @Test
    fun `a tool with side effects waits for a person's approval, and only it runs after the answer`(
        @TempDir dir: Path,
    ): Unit = runBlocking {
        val db = dir.resolve("runs.db")
        val weather = Weather()
        val mailer = Mailer()
        val tools = Tools.builder().add(weather).add(mailer).requireApproval("send").build()
        val script = Reply.Calls(
            listOf("temperature" to """{"city": "Paris"}""", "send" to """{"to": "ann@example.com", "body": "21 C"}"""),
        )
        val options = RunOptions(runId = "mail", checkpointing = Checkpointing(SqliteCheckpointStore(db)))
        val paused = reactAgent(ScriptedChatModel(script), tools).invoke(question("Mail Ann the weather"), options)
        paused.status shouldBe Status.INTERRUPTED
        val interrupt = paused.interrupts.single()
        interrupt.path shouldBe "tools[1]"
        interrupt.payload shouldBe """Run tool send with {"to": "ann@example.com", "body": "21 C"}? (yes/no)"""
        mailer.sent.get() shouldBe 0
        weather.count("Paris") shouldBe 1

        val model = ScriptedChatModel(Reply.Text("Sent."))
        val done = reactAgent(model, tools)
            .resume("mail", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))), "yes")
        done.state[AgentState.answer] shouldBe "Sent."
        mailer.sent.get() shouldBe 1
        weather.count("Paris") shouldBe 1
        toolResults(model.prompts.single())[1] shouldContain "sent to ann@example.com"
    }

    @Test
    fun `requireApproval of a tool that is not there fails naming the tools`() {
        val error =
            shouldThrow<IllegalArgumentException> { Tools.builder().add(Mailer()).requireApproval("mail").build() }
        error.message shouldBe
            "requireApproval names [mail], which are not among the tools added ([send]); add those tools, or fix the names."
    }
}
