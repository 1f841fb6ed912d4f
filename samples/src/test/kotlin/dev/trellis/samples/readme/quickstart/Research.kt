package dev.trellis.samples.readme.quickstart

import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking
import kotlin.time.Duration.Companion.seconds

object Research : StateSchema() {
    val question = key<String>("question")
    val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
    val drafts = key("drafts", default = 0)
}

val research = graph("research", Research) {
    val plan = node("plan") { set(Research.notes, listOf("plan for ${get(Research.question)}")) }
    val web = node("web", retry = Retry.exponential(maxAttempts = 3)) { set(Research.notes, listOf("web")) }
    val papers = node("papers") {
        emit("reading papers")
        set(Research.notes, listOf("papers"))
    }
    val write = node("write", timeout = 30.seconds) { update(Research.drafts) { it + 1 } }
    start(plan)
    plan then web // fan-out: web and papers run in parallel
    plan then papers
    web then write // join: write runs once, after both
    papers then write
    write.route(write, END) { if (it[Research.drafts] < 3) write else END }
    config { maxNodeExecutions = 50 }
}

fun main() = runBlocking {
    val result = research.invoke(stateOf(Research.question to "Why is the sky blue?"))
    println("${result.status} after ${result.state[Research.drafts]} drafts") // COMPLETED after 3 drafts
    research.events(stateOf(Research.question to "Why?")).collect { event -> println(event) }
}
