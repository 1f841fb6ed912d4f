package dev.trellis.samples

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.RunEvent

/** The state of the basics sample: typed keys, one with a reducer. */
internal object Greeting : StateSchema("greeting") {
    val person = key<String>("person")
    val greeting = key("greeting", default = "")
    val visits = key("visits", default = 0)
    val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
}

/** Kotlin DSL basics: a schema, three nodes in a chain, get / set / update / a reducer. */
internal object BasicsSample : Sample {
    override val name: String = "basics"
    override val description: String = "Kotlin DSL basics: typed state keys, nodes, edges, get/set/update, a reducer"

    val graph: Graph = graph("basics", Greeting) {
        val greet = node("greet") {
            set(Greeting.greeting, "Hello, ${get(Greeting.person)}!")
            set(Greeting.log, listOf("greeted"))
        }
        val count = node("count") {
            update(Greeting.visits) { it + 1 }
            set(Greeting.log, listOf("counted"))
        }
        val shout = node("shout") {
            update(Greeting.greeting) { it.uppercase() }
            set(Greeting.log, listOf("shouted"))
        }
        start(greet)
        greet then count
        count then shout
    }

    override suspend fun run(context: SampleContext, onEvent: suspend (RunEvent) -> Unit): SampleOutcome {
        val result =
            runAndCollect(
                graph,
                stateOf(Greeting.person to "Trellis", Greeting.visits to 41),
                context,
                onEvent = onEvent,
            )
        return SampleOutcome(listOf(result), listOf("Mermaid diagram of the graph:\n${graph.toMermaid()}"))
    }
}
