package dev.trellis.samples.readme.composition

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking

object Topic : StateSchema() { // the child graph's own state
    val question = key("question", default = "")
    val answer = key("answer", default = "")
}

object Inquiry : StateSchema() {
    val question = key<String>("question")
    val topics = key("topics", default = emptyList<String>())
    val answers = key("answers", default = emptyList<String>(), reducer = Reducer.append())
    val summary = key("summary", default = "")
}

val research = graph("research", Topic) {
    val search = node("search") { set(Topic.answer, "notes on ${get(Topic.question)}") }
    val summarize = node("summarize") { set(Topic.answer, get(Topic.answer).uppercase()) }
    start(search)
    search then summarize
}

val inquiry = graph("inquiry", Inquiry) {
    val plan = node("plan") { set(Inquiry.topics, listOf("light", "air", "eyes")) } // N known at run time
    val each = map("each", over = Inquiry.topics, graph = research, maxConcurrency = 2) { // a child run per item
        input { set(Topic.question, item) }
        output { child -> set(Inquiry.answers, listOf(child[Topic.answer])) } // folded in task order
    }
    val overview = subgraph("overview", research) { // one child run, mapped key to key
        input(Inquiry.question, Topic.question)
        output(Topic.answer, Inquiry.summary)
    }
    start(plan)
    plan then each
    each then overview
}

fun main() = runBlocking {
    val result = inquiry.invoke(stateOf(Inquiry.question to "the sky"))
    println(result.state[Inquiry.answers]) // [NOTES ON LIGHT, NOTES ON AIR, NOTES ON EYES]
    println(result.state[Inquiry.summary]) // NOTES ON THE SKY
    println(result.child("each[1]").state[Topic.question]) // air: the child run of task 1, by its path
}
