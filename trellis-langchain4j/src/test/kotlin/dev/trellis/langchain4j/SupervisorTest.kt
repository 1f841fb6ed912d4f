package dev.trellis.langchain4j

import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.langchain4j.data.message.UserMessage
import dev.langchain4j.model.output.TokenUsage
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Path
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

object Desk : StateSchema("desk") {
    val brief = key("brief", "")
    val text = key("text", "")
}

class SupervisorTest {
    private val usage = TokenUsage(100, 10)
    private val runs = ConcurrentHashMap<String, AtomicInteger>()

    /** A worker graph over [Desk] whose node runs [body] on the brief, counting its runs. */
    private fun desk(name: String, body: suspend (String) -> String): Worker {
        val g =
            graph(name, Desk) {
                start(
                    node("work") {
                        runs.computeIfAbsent(name) { AtomicInteger() }.incrementAndGet()
                        set(Desk.text, body(get(Desk.brief)))
                    },
                )
            }
        return Worker.of(name, "does $name work", g, Desk.brief, Desk.text)
    }

    private fun ran(name: String) = runs[name]?.get() ?: 0

    private fun ask(text: String) = stateOf(AgentState.messages to listOf(Message.User(text)))

    private fun delegate(vararg calls: Pair<String, String>) =
        Turn.Calls(calls.map { (worker, task) -> worker to """{"task": "$task"}""" })

    @Test
    fun `the supervisor delegates to workers in parallel, reads their results and decides again`(): Unit =
        runBlocking {
            // left and right wait for each other: they can only finish if they run at the same time
            val leftStarted = CompletableDeferred<Unit>()
            val rightStarted = CompletableDeferred<Unit>()
            val left = desk("left") {
                leftStarted.complete(Unit)
                rightStarted.await()
                "left did $it"
            }
            val right = desk("right") {
                rightStarted.complete(Unit)
                leftStarted.await()
                "right did $it"
            }
            val researcherModel = ScriptedChatModel(Turn.Text("Paris has 2.1M people"), usage = usage)
            val researcher = Worker.agent("researcher", "finds facts", reactAgent(researcherModel, Tools.from()))
            val boss =
                ScriptedChatModel(
                    delegate("left" to "part A", "right" to "part B"),
                    delegate("researcher" to "population of Paris"),
                    Turn.Text("All done."),
                    usage = usage,
                )
            val team = supervisor(boss, listOf(left, right, researcher), maxSteps = 3)

            val events = withTimeout(30_000) { team.events(ask("Do it")).toList() }

            val result = (events.last() as RunEvent.Terminal).result
            result.status shouldBe Status.COMPLETED
            result.state[AgentState.answer] shouldBe "All done."
            result.state[AgentState.steps] shouldBe 3
            events.filterIsInstance<RunEvent.NodeStarted>().map { it.path } shouldContainAll
                listOf(
                    "supervisor",
                    "workers",
                    "workers[0]/left/work",
                    "workers[1]/right/work",
                    "workers[0]/researcher/model",
                )
            boss.requests[1].messages().filterIsInstance<ToolExecutionResultMessage>().map { it.text() } shouldBe
                listOf("left did part A", "right did part B")
            boss.requests[2].messages().filterIsInstance<ToolExecutionResultMessage>().last().text() shouldBe
                "Paris has 2.1M people"
            boss.requests[0].toolSpecifications().map { it.name() } shouldBe listOf("left", "right", "researcher")
            boss.requests[0].messages().first().toString() shouldContain "delegate"
            (researcherModel.requests.single().messages().single() as UserMessage).singleText() shouldBe
                "population of Paris"
            // the supervisor's 3 calls and the researcher's 1, all counted in the top-level run
            result.meters shouldBe mapOf("tokens.input" to 400.0, "tokens.output" to 40.0)
        }

    @Test
    fun `a delegation to a worker that does not exist fails naming the workers`(): Unit = runBlocking {
        val boss = ScriptedChatModel(delegate("ghost" to "boo"))
        val error =
            shouldThrow<GraphRunException> {
                supervisor(boss, listOf(desk("left") { it })).invoke(ask("?"))
            }
        error.cause!!.message shouldContain "delegated to 'ghost', which is not among its workers [left]"
    }

    @Test
    fun `the step budget stops a supervisor that keeps delegating`(): Unit = runBlocking {
        val boss = ScriptedChatModel(delegate("left" to "a"), delegate("left" to "b"))
        val error =
            shouldThrow<GraphRunException> {
                supervisor(boss, listOf(desk("left") { it }), maxSteps = 2).invoke(ask("?"))
            }
        (error.cause as StepBudgetExceededException).requested shouldBe listOf("left")
        ran("left") shouldBe 1
    }

    @Test
    fun `a run stopped after the delegations runs no worker again when it resumes`(
        @TempDir dir: Path,
    ): Unit =
        runBlocking {
            val db = dir.resolve("runs.db")

            fun team(boss: ScriptedChatModel): Graph =
                supervisor(boss, listOf(desk("left") { "L:$it" }, desk("right") { "R:$it" }))
            val hanging = ScriptedChatModel(delegate("left" to "a", "right" to "b"), Turn.Hang)
            val options = RunOptions(runId = "desk-1", checkpointing = Checkpointing(SqliteCheckpointStore(db)))
            val running = async { team(hanging).invoke(ask("?"), options) }
            // the second supervisor call is under way
            withTimeout(30_000) { while (hanging.requests.size < 2) delay(5) }
            running.cancelAndJoin()

            // another process: a new graph and model, the same database
            val boss = ScriptedChatModel(Turn.Text("L:a and R:b"))
            val resumed = team(
                boss,
            ).resume("desk-1", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))))

            resumed.status shouldBe Status.COMPLETED
            resumed.state[AgentState.answer] shouldBe "L:a and R:b"
            ran("left") shouldBe 1
            ran("right") shouldBe 1
            boss.requests.single().messages().filterIsInstance<ToolExecutionResultMessage>().map { it.text() } shouldBe
                listOf("L:a", "R:b")
        }

    @Test
    fun `a worker's approval interrupt pauses the supervisor, and only that worker goes on after the answer`(
        @TempDir dir: Path,
    ): Unit = runBlocking {
        val db = dir.resolve("runs.db")
        val mailer = Mailer()
        val tools = Tools.builder().add(mailer).requireApproval("send").build()

        fun team(boss: ScriptedChatModel, clerkModel: ScriptedChatModel): Graph =
            supervisor(
                boss,
                listOf(Worker.agent("clerk", "sends mail", reactAgent(clerkModel, tools)), desk("left") { "L:$it" }),
            )
        val send = Turn.Calls(listOf("send" to """{"to": "ann@example.com", "body": "hi"}"""))
        val options = RunOptions(runId = "desk-2", checkpointing = Checkpointing(SqliteCheckpointStore(db)))
        val paused =
            team(ScriptedChatModel(delegate("clerk" to "mail Ann", "left" to "a")), ScriptedChatModel(send))
                .invoke(ask("?"), options)

        paused.status shouldBe Status.INTERRUPTED
        paused.interrupts.single().path shouldBe "workers[0]/clerk/tools[0]"
        mailer.sent.get() shouldBe 0
        ran("left") shouldBe 1

        val boss = ScriptedChatModel(Turn.Text("Mailed Ann."))
        val resumed =
            team(boss, ScriptedChatModel(Turn.Text("Mail sent.")))
                .resume("desk-2", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))), "yes")

        resumed.state[AgentState.answer] shouldBe "Mailed Ann."
        mailer.sent.get() shouldBe 1
        ran("left") shouldBe 1 // its delegation had completed: not run again
        boss.requests.single().messages().filterIsInstance<ToolExecutionResultMessage>().map { it.text() } shouldBe
            listOf("Mail sent.", "L:a")
    }

    @Test
    fun `workers are checked when the supervisor is built`() {
        shouldThrow<IllegalArgumentException> {
            Worker.of("bad name", "x", graph("g", Desk) { start(node("n") {}) }, Desk.brief, Desk.text)
        }
            .message shouldContain "not a valid tool name"
        shouldThrow<IllegalArgumentException> { Worker.agent("w", "x", graph("g", Desk) { start(node("n") {}) }) }
            .message shouldContain "not over AgentState"
        shouldThrow<IllegalArgumentException> {
            supervisor(
                ScriptedChatModel(),
                listOf(desk("a") { it }, desk("a") { it }),
            )
        }
            .message shouldContain "same name"
    }
}
