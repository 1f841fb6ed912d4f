package dev.trellis.samples.readme.compensation

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking

object Trip : StateSchema() {
    val booking = key("booking", default = "")
}

val trip = graph("trip", Trip) {
    val book = node("book") { set(Trip.booking, "hotel-42") }
    val pay = node("pay") { error("card declined") }
    // If a later step fails, the booking is undone, with the state as it was right after it.
    book.compensate { state -> println("cancel ${state[Trip.booking]}") }
    start(book)
    book then pay
}

fun main() = runBlocking {
    try {
        trip.invoke()
    } catch (e: GraphRunException) {
        println("${e.cause?.message}: ${e.result.compensations}")
    }
}
