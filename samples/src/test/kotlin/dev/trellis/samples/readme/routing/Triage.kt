package dev.trellis.samples.readme.routing

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking

object Ticket : StateSchema() {
    val text = key<String>("text")
    val queue = key("queue", default = "")
}

val triage = graph("triage", Ticket) {
    val read = node("read") { }
    val outage = node("outage") { set(Ticket.queue, "outage") }
    val billing = node("billing") { set(Ticket.queue, "billing") }
    val human = node("human") { set(Ticket.queue, "human") }
    start(read)
    // Tried in this order, the first that holds wins; build() refuses a block that does not say what else happens.
    read.firstMatch {
        on(outage) { "down" in it[Ticket.text] }
        on(billing) { "invoice" in it[Ticket.text] }
        otherwise(human) // or otherwise(END): the path may end here; or otherwiseFail(): NoRouteMatchedException
    }
}

fun main() = runBlocking {
    for (text in listOf("site down, invoice lost", "invoice sent twice", "hello")) {
        println(triage.invoke(stateOf(Ticket.text to text)).state[Ticket.queue]) // outage, billing, human
    }
}
