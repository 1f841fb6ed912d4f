package dev.trellis.fleet

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeRef
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph

/** The benchmark's graph: ten nodes in a chain, each writing one key; the first records when it started. */
object BenchGraph {
    object Steps : StateSchema("fleet-bench") {
        val started = key("started", default = 0L)
        val steps = key("steps", default = 0, reducer = dev.trellis.graph.Reducer.sum())
    }

    fun build(): Graph = graph("bench", Steps) {
        fun step(i: Int): NodeRef = node("s$i") {
            if (i == 1) set(Steps.started, System.currentTimeMillis())
            set(Steps.steps, 1)
        }
        val nodes = (1..10).map(::step)
        start(nodes.first())
        nodes.zipWithNext().forEach { (a, b) -> a then b }
    }
}
