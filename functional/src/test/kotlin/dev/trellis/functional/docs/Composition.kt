package dev.trellis.functional.docs

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.functional.WorkflowInterruptedException
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

object Ask : StateSchema("ask") {
    val topic = key<String>("topic")
    val draft = key<String>("draft", "")
    val verdict = key<String>("verdict", "")
}

val asking = graph("asking", Ask) {
    val draft = node("draft") { set(Ask.draft, "the draft on ${get(Ask.topic)}") }
    val approve = node("approve") { set(Ask.verdict, interrupt("Publish ${get(Ask.draft)}?")) }
    start(draft)
    draft then approve
    approve then END
}

val publisher = workflow<String, String>("publisher") { topic ->
    val verdict = graphTask("ask", asking, stateOf(Ask.topic to topic), Ask.verdict) // may pause the workflow
    task("publish") { if (verdict == "yes") "published $topic" else "kept $topic" }
}

suspend fun publish(store: CheckpointStore): String = try {
    publisher.run("tides", store, runId = "publish-1")
} catch (paused: WorkflowInterruptedException) {
    println(paused.payload) // the child graph's question: Publish the draft on tides?
    publisher.resume("publish-1", store, answer = "yes") // the child resumes at its "approve" node
}
