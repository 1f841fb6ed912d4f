package dev.trellis.samples

import dev.langchain4j.agent.tool.P
import dev.langchain4j.agent.tool.Tool
import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.langchain4j.model.chat.ChatModel
import dev.trellis.graph.Graph
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.Handoff
import dev.trellis.langchain4j.Message
import dev.trellis.langchain4j.SwarmAgent
import dev.trellis.langchain4j.SwarmState
import dev.trellis.langchain4j.Tools
import dev.trellis.langchain4j.swarm
import dev.trellis.runtime.RunEvent
import dev.trellis.test.model.ScriptedAnswer
import dev.trellis.test.model.ScriptedChatModel
import java.util.concurrent.atomic.AtomicInteger

/** The billing agent's tool: refunds a charge (counted, so the sample can show each ran once). */
internal class RefundDesk {
    val refunds = AtomicInteger()

    @Tool("Refunds a charge by its id")
    fun refund(
        @P(name = "charge", value = "the charge id, ch_…") charge: String,
    ): String {
        refunds.incrementAndGet()
        return "refunded $charge"
    }
}

/**
 * A support swarm on scripted models: triage reads each ticket and hands it, with a reason, to billing (which
 * refunds with a tool) or tech; each handoff is an event, and the agent that ends with control is in the state.
 */
internal object HandoffSample : Sample {
    override val name: String = "handoff"
    override val description: String = "a swarm: triage hands each ticket to billing or tech, with the conversation"

    val tickets: List<String> = listOf("I was charged twice for May (charge ch_2)", "The app crashes when I upload")

    /** Triage: hands a ticket about a charge to billing, anything else to tech. */
    fun triageModel(): ChatModel = ScriptedChatModel.builder()
        .whenPrompt("charged", ScriptedAnswer.toolCall("transfer_to_billing", """{"reason": "a double charge"}"""))
        .whenPrompt("", ScriptedAnswer.toolCall("transfer_to_tech", """{"reason": "a crash"}"""))
        .build()

    /** Billing: refunds the charge, then says so. */
    fun billingModel(): ChatModel = ScriptedChatModel.builder()
        .whenRequest({ (it.messages().last() as? ToolExecutionResultMessage)?.toolName() == "refund" }) {
            ScriptedAnswer.text("Refunded ch_2; you will see it in 3 days.")
        }
        .whenPrompt("", ScriptedAnswer.toolCall("refund", """{"charge": "ch_2"}"""))
        .build()

    /** Tech: knows the bug. */
    fun techModel(): ChatModel =
        ScriptedChatModel.builder().whenPrompt("", ScriptedAnswer.text("A known bug of 2.0; update to 2.1.")).build()

    fun graph(desk: RefundDesk): Graph = swarm(
        listOf(
            SwarmAgent.of("triage", "first contact: finds who can help", triageModel(), system = "Route tickets."),
            SwarmAgent.of("billing", "invoices, refunds and payments", billingModel(), Tools.from(desk)),
            SwarmAgent.of("tech", "bugs, errors and outages", techModel()),
        ),
        maxHandoffs = 3,
        id = "support",
    )

    override suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome {
        val desk = RefundDesk()
        val support = graph(desk)
        val results = tickets.map { ticket ->
            val input = stateOf(SwarmState.messages to listOf(Message.User(ticket)))
            runAndCollect(support, input, context, onEvent = onEvent)
        }
        val notes = results.mapIndexed { i, result ->
            val handoffs = result.state[SwarmState.handoffs].joinToString { it.describe() }
            "ticket ${i + 1}: ${result.state[SwarmState.activeAgent]} answered " +
                "'${result.state[SwarmState.answer]}' after $handoffs"
        } + "refunds made: ${desk.refunds.get()}"
        return SampleOutcome(results, notes)
    }

    private fun Handoff.describe(): String = "$from → $to ($reason)"
}
