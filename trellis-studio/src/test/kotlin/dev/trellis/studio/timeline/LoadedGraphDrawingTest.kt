package dev.trellis.studio.timeline

import dev.trellis.graph.Graph
import dev.trellis.graph.spec.GraphSpec
import dev.trellis.graph.spec.HandlerRegistry
import dev.trellis.runtime.Status
import dev.trellis.studio.TestGraphs
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.junit.jupiter.api.Test

/**
 * A graph loaded from a spec (`docs/graph-spec.md`) draws in the studio exactly as the graph it was exported from: the
 * run page's graph (its SVG) and its status Mermaid chart, for a chain and a graph that interrupts. (The studio's map
 * graph maps its child's input and output with blocks of code, which a spec cannot hold: it does not export.)
 */
class LoadedGraphDrawingTest {
    private fun loaded(graph: Graph): Graph {
        val registry = HandlerRegistry.builder().handlersOf(graph).build()
        return GraphSpec.load(GraphSpec.toYaml(graph, registry), registry)
    }

    private fun svg(graph: Graph, nodes: List<TimelineNode>): String =
        StringBuilder().also { GraphSvg.render(graph, nodes, it) }.toString()

    @Test
    fun `loaded graphs draw like the graphs they were exported from`() {
        for (graph in listOf(TestGraphs.simple, TestGraphs.approval)) {
            val twin = loaded(graph)
            val nodes = graph.nodes.mapIndexed { i, node ->
                TimelineNode(node.id, if (i == 0) Status.COMPLETED else Status.PENDING, if (i == 0) 1 else 0, 0)
            }
            svg(twin, nodes) shouldBe svg(graph, nodes)
            svg(twin, nodes) shouldContain graph.nodes.last().id
            statusMermaid(twin, nodes) shouldBe statusMermaid(graph, nodes)
        }
    }
}
