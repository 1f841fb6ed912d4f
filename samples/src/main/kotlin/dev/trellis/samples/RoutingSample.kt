package dev.trellis.samples

import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunEvent

/** The state of the routing sample. */
internal object Ticket : StateSchema("ticket") {
    val text = key<String>("text")
    val category = key("category", default = "")
    val answer = key("answer", default = "")
}

/** Conditional routing: a classifier routes each ticket to exactly one handler. */
internal object RoutingSample : Sample {
    override val name: String = "routing"
    override val description: String = "conditional routing: classify a ticket, route it to one of three handlers"

    val tickets: List<String> = listOf("I was charged twice", "The app crashes on start", "Do you ship to Mars?")

    val graph: Graph = graph("routing", Ticket) {
        val classify = node("classify") {
            val text = get(Ticket.text).lowercase()
            set(
                Ticket.category,
                when {
                    "charge" in text || "refund" in text -> "billing"
                    "crash" in text || "error" in text -> "tech"
                    else -> "other"
                },
            )
        }
        val billing = node("billing") { set(Ticket.answer, "Refund issued.") }
        val tech = node("tech") { set(Ticket.answer, "Try version 2.1.") }
        val other = node("other") { set(Ticket.answer, "A human will reply soon.") }
        start(classify)
        classify.route(billing, tech, other) { state ->
            when (state[Ticket.category]) {
                "billing" -> billing
                "tech" -> tech
                else -> other
            }
        }
    }

    override suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome {
        val results = tickets.map { runAndCollect(graph, stateOf(Ticket.text to it), context, onEvent = onEvent) }
        return SampleOutcome(
            results,
            results.map {
                "'${it.state[Ticket.text]}' → ${it.state[Ticket.category]}: ${it.state[Ticket.answer]}"
            },
        )
    }
}
