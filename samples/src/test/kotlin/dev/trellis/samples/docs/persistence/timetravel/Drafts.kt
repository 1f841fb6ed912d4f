package dev.trellis.samples.docs.persistence.timetravel

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph

/** The run of the time travel example of `docs/persistence.md`: three steps, the last one writes in its tone. */
object Doc : StateSchema("drafts") {
    val tone = key("tone", default = "plain")
    val steps = key("steps", default = emptyList<String>(), reducer = Reducer.append())
}

val drafts = graph("drafts", Doc) {
    val outline = node("outline") { set(Doc.steps, listOf("outline")) }
    val draft = node("draft") { set(Doc.steps, listOf("draft")) }
    val polish = node("polish") { set(Doc.steps, listOf("polish ${get(Doc.tone)}")) }
    start(outline)
    outline then draft
    draft then polish
}
