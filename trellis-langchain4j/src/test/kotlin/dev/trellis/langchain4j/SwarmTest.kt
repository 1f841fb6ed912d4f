package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.P
import dev.langchain4j.agent.tool.Tool
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
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
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Path
import java.util.concurrent.atomic.AtomicInteger

/** Refunds, counted across runs and resumes. */
class Refunds {
    val made = AtomicInteger()

    @Tool("Refunds a charge")
    fun refund(
        @P(name = "charge", value = "the charge id") charge: String,
    ): String {
        made.incrementAndGet()
        return "refunded $charge"
    }
}

class SwarmTest {
    private fun handoff(to: String, reason: String) =
        Turn.Calls(listOf("transfer_to_$to" to """{"reason": "$reason"}"""))

    private fun ask(text: String) = stateOf(SwarmState.messages to listOf(Message.User(text)))

    private fun support(triageModel: ScriptedChatModel, billingModel: ScriptedChatModel, techModel: ScriptedChatModel) =
        run {
            val refunds = Tools.builder().add(Refunds()).build()
            // docs/agents.md, Handoff and swarms
            val triage = SwarmAgent.of("triage", "first contact: finds who can help", triageModel, system = "Route.")
            val billing = SwarmAgent.of("billing", "invoices, refunds and payments", billingModel, tools = refunds)
            val tech = SwarmAgent.of("tech", "bugs, errors and outages", techModel)
            val support = swarm(listOf(triage, billing, tech), maxHandoffs = 3)
            support
        }

    @Test
    fun `triage hands the conversation and a reason to billing, which answers`(): Unit = runBlocking {
        val support = support(
            ScriptedChatModel(handoff("billing", "a double charge")),
            ScriptedChatModel(Turn.Text("Refunded.")),
            ScriptedChatModel(),
        )
        val input = ask("I was charged twice")
        // docs/agents.md, the handoff events
        support.events(input).collect { event ->
            val handoff = (event as? RunEvent.Custom)?.payload as? Handoff
            if (handoff != null) println("${handoff.from} -> ${handoff.to}: ${handoff.reason}")
        }

        val triageModel = ScriptedChatModel(handoff("billing", "a double charge"))
        val billingModel = ScriptedChatModel(Turn.Text("I refunded the second charge."))
        val techModel = ScriptedChatModel()
        val events = support(triageModel, billingModel, techModel).events(input).toList()
        events.filterIsInstance<RunEvent.Custom>().map { it.path to it.payload } shouldBe
            listOf("triage" to Handoff("triage", "billing", "a double charge"))
        val result = (events.last() as RunEvent.RunCompleted).result
        result.state[SwarmState.answer] shouldBe "I refunded the second charge."
        result.state[SwarmState.activeAgent] shouldBe "billing"
        result.state[SwarmState.handoffs] shouldBe listOf(Handoff("triage", "billing", "a double charge"))
        result.state[SwarmState.steps] shouldBe 2

        // triage was offered a handoff tool per other agent; billing read the whole conversation and its own tools
        triageModel.requests.single().toolSpecifications().map { it.name() } shouldBe
            listOf("transfer_to_billing", "transfer_to_tech")
        triageModel.requests.single().messages().first() shouldBe SystemMessage.from("Route.")
        val billingRequest = billingModel.requests.single()
        billingRequest.toolSpecifications().map { it.name() } shouldBe
            listOf("refund", "transfer_to_triage", "transfer_to_tech")
        billingRequest.messages().filterIsInstance<ToolExecutionResultMessage>().single().text() shouldBe
            "Transferred to billing: a double charge"
        techModel.requests.size shouldBe 0
    }

    @Test
    fun `the docs' swarm runs`(): Unit = runBlocking {
        val support = support(
            ScriptedChatModel(handoff("billing", "a double charge")),
            ScriptedChatModel(Turn.Text("Refunded.")),
            ScriptedChatModel(),
        )
        // docs/agents.md, Handoff and swarms
        val result = support.invoke(stateOf(SwarmState.messages to listOf(Message.User("I was charged twice"))))
        println(result.state[SwarmState.activeAgent] + ": " + result.state[SwarmState.answer])
        result.state[SwarmState.answer] shouldBe "Refunded."
    }

    @Test
    fun `an agent's own tools run as map tasks, then the same agent goes on`(): Unit = runBlocking {
        val billingModel = ScriptedChatModel(
            Turn.Calls(listOf("refund" to """{"charge": "ch_2"}""")),
            Turn.Text("Refunded ch_2."),
        )
        val support = support(ScriptedChatModel(handoff("billing", "refund")), billingModel, ScriptedChatModel())
        val events = support.events(ask("Refund ch_2")).toList()
        val result = (events.last() as RunEvent.RunCompleted).result
        result.state[SwarmState.answer] shouldBe "Refunded ch_2."
        events.filterIsInstance<RunEvent.NodeStarted>().map { it.path } shouldBe
            listOf("dispatch", "triage", "billing", "billing-tools", "billing-tools[0]", "billing")
        billingModel.requests.last().messages().filterIsInstance<ToolExecutionResultMessage>().last().text() shouldBe
            "refunded ch_2"
    }

    @Test
    fun `a rule hands over without calling a model`(): Unit = runBlocking {
        // docs/agents.md, a handoff by rule
        val router = SwarmAgent.router("triage", "first contact") { messages ->
            val text = (messages.last() as? Message.User)?.text.orEmpty()
            if ("invoice" in text) HandoffTarget("billing", "mentions an invoice") else HandoffTarget("tech", "other")
        }
        val billing = SwarmAgent.of("billing", "invoices", ScriptedChatModel(Turn.Text("Invoice sent.")))
        val tech = SwarmAgent.of("tech", "bugs", ScriptedChatModel(Turn.Text("Restart it.")))
        val support = swarm(listOf(router, billing, tech))
        support.invoke(ask("Where is my invoice?")).state[SwarmState.answer] shouldBe "Invoice sent."
        val other = support.invoke(ask("The app crashes"))
        other.state[SwarmState.answer] shouldBe "Restart it."
        other.state[SwarmState.handoffs] shouldBe listOf(Handoff("triage", "tech", "other"))
        other.state[SwarmState.steps] shouldBe 1
    }

    @Test
    fun `the handoff beyond maxHandoffs fails the run, naming the limit and the handoff`(): Unit = runBlocking {
        val ping = ScriptedChatModel(handoff("b", "yours"), handoff("b", "yours again"))
        val pong = ScriptedChatModel(handoff("a", "no, yours"))
        val pingPong = swarm(listOf(SwarmAgent.of("a", "A", ping), SwarmAgent.of("b", "B", pong)), maxHandoffs = 2)
        val events = pingPong.events(ask("help")).toList()
        val failed = events.last().shouldBeInstanceOf<RunEvent.RunFailed>()
        val error = generateSequence(failed.result.error) { it.cause }
            .filterIsInstance<HandoffLimitExceededException>().first()
        error.maxHandoffs shouldBe 2
        error.refused shouldBe Handoff("a", "b", "yours again")
        error.message shouldContain "raise maxHandoffs"
        events.mapNotNull { ((it as? RunEvent.Custom)?.payload as? Handoff)?.to } shouldBe listOf("b", "a")
    }

    @Test
    fun `a resumed run continues with the agent that had control`(
        @TempDir dir: Path,
    ): Unit = runBlocking {
        val db = dir.resolve("swarm.db")
        val refunds = Refunds()
        val tools = Tools.builder().add(refunds).requireApproval("refund").build()

        fun graph(triage: ScriptedChatModel, billing: ScriptedChatModel) =
            swarm(listOf(SwarmAgent.of("triage", "first", triage), SwarmAgent.of("billing", "refunds", billing, tools)))
        val first = graph(
            ScriptedChatModel(handoff("billing", "refund")),
            ScriptedChatModel(Turn.Calls(listOf("refund" to """{"charge": "ch_2"}"""))),
        )
        val options = RunOptions(runId = "ticket-1", checkpointing = Checkpointing(SqliteCheckpointStore(db)))
        val paused = first.invoke(ask("Refund ch_2"), options)
        paused.status shouldBe Status.INTERRUPTED
        paused.interrupts.single().path shouldBe "billing-tools[0]"
        paused.state[SwarmState.activeAgent] shouldBe "billing"

        // another process: new models, triage's with no answer at all; billing goes on after the approval
        val triage = ScriptedChatModel()
        val billing = ScriptedChatModel(Turn.Text("Refunded ch_2."))
        val done = graph(triage, billing)
            .resume("ticket-1", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))), "yes")
        done.status shouldBe Status.COMPLETED
        done.state[SwarmState.answer] shouldBe "Refunded ch_2."
        refunds.made.get() shouldBe 1
        triage.requests.size shouldBe 0
    }

    @Test
    fun `a run cut off during an agent's model call resumes with that agent`(
        @TempDir dir: Path,
    ): Unit = runBlocking {
        val db = dir.resolve("cut.db")
        val hanging = ScriptedChatModel(Turn.Hang)
        val options = RunOptions(runId = "ticket-2", checkpointing = Checkpointing(SqliteCheckpointStore(db)))
        val running = async {
            support(ScriptedChatModel(handoff("tech", "a crash")), ScriptedChatModel(), hanging)
                .invoke(ask("It crashes"), options)
        }
        withTimeout(30_000) { while (hanging.requests.isEmpty()) delay(5) }
        running.cancelAndJoin()

        val tech = ScriptedChatModel(Turn.Text("Update to 2.1."))
        val resumed = support(ScriptedChatModel(), ScriptedChatModel(), tech)
            .resume("ticket-2", RunOptions(checkpointing = Checkpointing(SqliteCheckpointStore(db))))
        resumed.state[SwarmState.answer] shouldBe "Update to 2.1."
        resumed.state[SwarmState.handoffs].size shouldBe 1
    }

    @Test
    fun `the next run of a conversation starts with the agent that had control`(): Unit = runBlocking {
        val billingModel = ScriptedChatModel(Turn.Text("Refunded."), Turn.Text("The second is refunded too."))
        val support = support(ScriptedChatModel(handoff("billing", "refund")), billingModel, ScriptedChatModel())
        val result = support.invoke(ask("I was charged twice"))
        // docs/agents.md, the next run
        val next = support.invoke(
            stateOf(
                SwarmState.messages to result.state[SwarmState.messages] + Message.User("And the other charge?"),
                SwarmState.activeAgent to result.state[SwarmState.activeAgent],
            ),
        )
        next.state[SwarmState.answer] shouldBe "The second is refunded too."
        next.state[SwarmState.handoffs] shouldBe emptyList()
        billingModel.requests.size shouldBe 2
    }

    @Test
    fun `bad swarms and bad starts are refused, naming the fix`(): Unit = runBlocking {
        val model = ScriptedChatModel()
        shouldThrow<IllegalArgumentException> {
            swarm(listOf(SwarmAgent.of("a", "A", model, handoffsTo = listOf("z"))))
        }.message shouldContain "hands off to [z], which are not other agents"
        shouldThrow<IllegalArgumentException> {
            swarm(listOf(SwarmAgent.of("a", "A", model)), defaultAgent = "b")
        }.message shouldContain "no agent 'b' to start with"
        shouldThrow<IllegalArgumentException> { SwarmAgent.of("a b", "A", model) }.message shouldContain
            "not usable in a tool name"
        val error = shouldThrow<GraphRunException> {
            swarm(listOf(SwarmAgent.of("a", "A", model))).invoke(
                stateOf(SwarmState.messages to listOf(Message.User("hi")), SwarmState.activeAgent to "ghost"),
            )
        }
        error.cause!!.message shouldContain "active agent 'ghost', which is not among its agents [a]"
    }
}
