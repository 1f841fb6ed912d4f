package consumer

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking

object Notes : StateSchema() {
    val question = key<String>("question")
    val notes = key("notes", default = emptyList<String>(), reducer = Reducer.append())
}

val notes = graph("consumer", Notes) {
    val plan = node("plan") { set(Notes.notes, listOf("plan for ${get(Notes.question)}")) }
    val web = node("web") { set(Notes.notes, listOf("web")) }
    val papers = node("papers") { set(Notes.notes, listOf("papers")) }
    val write = node("write") { set(Notes.notes, listOf("written")) }
    start(plan)
    plan then web
    plan then papers
    web then write
    papers then write
}

fun answer(): String = runBlocking {
    val result = notes.invoke(stateOf(Notes.question to "why"))
    "${result.status}: ${result.state[Notes.notes].sorted().joinToString()}"
}
