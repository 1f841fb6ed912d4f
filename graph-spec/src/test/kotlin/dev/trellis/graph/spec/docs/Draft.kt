package dev.trellis.graph.spec.docs

import dev.trellis.graph.StateSchema
import dev.trellis.graph.spec.GraphSpec
import dev.trellis.graph.spec.handlerRegistry
import dev.trellis.graph.stateOf
import dev.trellis.runtime.invoke
import kotlinx.coroutines.runBlocking
import java.nio.file.Path

object Draft : StateSchema("draft") {
    val topic = key<String>("topic")
    val drafts = key("drafts", default = 0)
    val text = key("text", default = "")
}

// The code a spec may name: nothing else runs.
val registry = handlerRegistry {
    schema(Draft)
    node("write") {
        val n = get(Draft.drafts) + 1
        set(Draft.drafts, n)
        set(Draft.text, "Draft $n about ${get(Draft.topic)}")
    }
}

fun main(args: Array<String>) = runBlocking {
    val graph = GraphSpec.load(Path.of(args[0]), registry) // every problem at once, with line and column
    val result = graph.invoke(stateOf(Draft.topic to "the sky"))
    println(result.state[Draft.text])
    println(GraphSpec.toYaml(graph, registry).lines().first()) // back to data
}
