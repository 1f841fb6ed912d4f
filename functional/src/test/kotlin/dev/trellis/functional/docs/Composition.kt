package dev.trellis.functional.docs

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.functional.task
import dev.trellis.functional.workflow
import dev.trellis.graph.Graph
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf

object Words : StateSchema("words") {
    val text = key<String>("text")
    val count = key<Int>("count", 0)
}

val wordCount = graph("word-count", Words) {
    val count = node("count") { set(Words.count, get(Words.text).split(" ").size) }
    start(count)
    count then END
}

object Doc : StateSchema("doc") {
    val draft = key<String>("draft")
    val outcome = key<String>("outcome", "")
}

val summary = workflow<String, String>("summary") { text ->
    val words = graphTask("count", wordCount, stateOf(Words.text to text), Words.count) // durable like a task
    task("summarize") { "$words words" }
}

fun reviewGraph(store: CheckpointStore): Graph = graph("review", Doc) {
    val review = node("review", body = approval.node(store, Doc.outcome) { it[Doc.draft] })
    start(review)
    review then END
}
