package dev.trellis.studio.timeline

import dev.trellis.graph.Edge
import dev.trellis.graph.Graph
import dev.trellis.runtime.Status

/**
 * Draws a graph as SVG with its own layered layout (no Mermaid renderer is loaded: the page must open without
 * network access): nodes are ranked by their longest path from the start, ignoring edges that close a cycle,
 * one row per rank, top to bottom; each box shows the node's id, status and execution count (`not run` for a node
 * that never ran), and a composite node what its child runs or map tasks did. Edges that close a cycle are drawn as
 * dashed curves on the right, conditional and routed edges dashed; every dashed edge carries its label (`if`,
 * `route`, `otherwise`, `on failure`).
 */
internal object GraphSvg {
    private const val BOX_W = 168
    private const val BOX_H = 50
    private const val GAP_X = 28
    private const val GAP_Y = 44
    private const val MARGIN = 20
    private const val START = "__start__"

    private class Link(val from: String, val to: String, val label: String?) {
        val dashed: Boolean get() = label != null
    }

    /**
     * Draws [graph] with the statuses and counts of [nodes]; [children] gives, for a composite node, what its child
     * runs or map tasks did (`4 tasks · search ×4`), shown under its count.
     */
    fun render(
        graph: Graph,
        nodes: List<TimelineNode>,
        out: StringBuilder,
        children: Map<String, String> = emptyMap(),
    ) {
        val byId = nodes.associateBy { it.nodeId }
        val ids = listOf(START) + graph.nodes.map { it.id } + Graph.END
        val links = ArrayList<Link>()
        for (entry in graph.entryPoints) links += Link(START, entry, null)
        for (edge in graph.edges) {
            when (edge) {
                is Edge.Plain -> links += Link(edge.from, edge.to, null)
                is Edge.Conditional -> links += Link(edge.from, edge.to, "if")
                is Edge.Route -> for (t in edge.targets) links += Link(edge.from, t, "route")
                is Edge.FirstMatch -> {
                    edge.branches.forEachIndexed { i, b -> links += Link(edge.from, b.to, "if ${i + 1}") }
                    edge.otherwise?.let { links += Link(edge.from, it, "otherwise") }
                }
                is Edge.OnFailure -> links += Link(edge.from, edge.to, "on failure")
            }
        }
        for (node in graph.nodes) {
            if (graph.edges.none { it.from == node.id && it !is Edge.OnFailure }) {
                links +=
                    Link(node.id, Graph.END, null)
            }
        }
        val back = backLinks(ids, links)
        val rank = HashMap<String, Int>().apply { for (id in ids) put(id, 0) }
        repeat(ids.size) {
            for ((i, l) in links.withIndex()) {
                if (i in back) continue
                val r = rank.getValue(l.from) + 1
                if (r > rank.getValue(l.to)) rank[l.to] = r
            }
        }
        rank[Graph.END] = (ids.filter { it != Graph.END }.maxOf { rank.getValue(it) }) + 1
        val rows = ids.groupBy { rank.getValue(it) }.toSortedMap()
        val widest = rows.values.maxOf { it.size }
        val width = MARGIN * 2 + widest * BOX_W + (widest - 1) * GAP_X + 110
        val height = MARGIN * 2 + rows.size * BOX_H + (rows.size - 1) * GAP_Y
        val x = HashMap<String, Int>()
        val y = HashMap<String, Int>()
        for ((r, row) in rows.entries.withIndex()) {
            val rowWidth = row.value.size * BOX_W + (row.value.size - 1) * GAP_X
            var left = (width - 110 - rowWidth) / 2
            for (id in row.value) {
                x[id] = left
                y[id] = MARGIN + r * (BOX_H + GAP_Y)
                left += BOX_W + GAP_X
            }
        }
        out.append("<svg class=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(width)
            .append("\" height=\"").append(height).append("\" viewBox=\"0 0 ").append(width).append(' ').append(height)
            .append("\">\n")
        out.append("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" ")
            .append(
                "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/>",
            )
            .append("</marker></defs>\n")
        for ((i, l) in links.withIndex()) {
            val from = l.from
            val to = l.to
            val dashed = l.dashed
            val x1 = x.getValue(from) + BOX_W / 2
            val y1 = y.getValue(from) + BOX_H
            val x2 = x.getValue(to) + BOX_W / 2
            val y2 = y.getValue(to)
            out.append("<path class=\"edge")
            if (i in back) {
                val right = x.getValue(from) + BOX_W
                val bend = maxOf(right, x.getValue(to) + BOX_W) + 40
                val sy = y.getValue(from) + BOX_H / 2
                val ty = y.getValue(to) + BOX_H / 2
                out.append(" back\" d=\"M ").append(right).append(' ').append(sy).append(" C ").append(bend).append(' ')
                    .append(sy).append(", ").append(bend).append(' ').append(ty).append(", ")
                    .append(x.getValue(to) + BOX_W).append(' ').append(ty).append('"')
            } else {
                val mid = (y1 + y2) / 2
                out.append(if (dashed) " conditional" else "").append("\" d=\"M ").append(x1).append(' ').append(y1)
                    .append(" C ").append(x1).append(' ').append(mid).append(", ").append(x2).append(' ').append(mid)
                    .append(", ").append(x2).append(' ').append(y2).append('"')
            }
            out.append(" data-from=\"").append(Html.escape(from)).append("\" data-to=\"").append(Html.escape(to))
                .append("\" marker-end=\"url(#arrow)\"/>\n")
            if (l.label != null) {
                val (lx, ly) = if (i in back) {
                    (maxOf(x.getValue(from), x.getValue(to)) + BOX_W + 34) to (y1 + y2 - BOX_H) / 2
                } else {
                    ((x1 + x2) / 2 + 4) to ((y1 + y2) / 2 + 4)
                }
                out.append("<text class=\"edge-label\" x=\"").append(lx).append("\" y=\"").append(ly).append("\">")
                    .append(Html.escape(l.label)).append("</text>\n")
            }
        }
        for (id in ids) {
            val bx = x.getValue(id)
            val by = y.getValue(id)
            if (id == START || id == Graph.END) {
                out.append(
                    "<g class=\"terminal\"><rect x=\"",
                ).append(bx + BOX_W / 2 - 40).append("\" y=\"").append(by + 8)
                    .append(
                        "\" width=\"80\" height=\"30\" rx=\"15\"/><text x=\"",
                    ).append(bx + BOX_W / 2).append("\" y=\"")
                    .append(by + 28).append("\">").append(if (id == START) "start" else "end").append("</text></g>\n")
                continue
            }
            val node = byId[id]
            val count = node?.executions ?: 0
            val status = if (count == 0 && node?.status != Status.INTERRUPTED) Status.PENDING else node!!.status
            out.append("<g class=\"gnode status-").append(status.name.lowercase()).append("\" data-node=\"")
                .append(Html.escape(id)).append("\" data-status=\"").append(status.name).append("\" data-count=\"")
                .append(count).append("\">")
            val summary = if (count == 0) "not run" else "${status.name} \u00d7$count"
            out.append("<title>").append(Html.escape(id)).append(": ").append(summary)
            if (node != null && node.attempts > 0) out.append(", ").append(node.attempts).append(" attempt(s)")
            children[id]?.let { out.append("; ").append(Html.escape(it)) }
            out.append("</title>")
            out.append("<rect x=\"").append(bx).append("\" y=\"").append(by).append("\" width=\"").append(BOX_W)
                .append("\" height=\"").append(BOX_H).append("\" rx=\"6\"/>")
            out.append(
                "<text class=\"name\" x=\"",
            ).append(bx + BOX_W / 2).append("\" y=\"").append(by + 19).append("\">")
                .append(Html.escape(Html.shorten(id, 22))).append("</text>")
            out.append("<text class=\"count\" x=\"").append(bx + BOX_W / 2).append("\" y=\"").append(by + 34)
                .append("\">").append(summary).append("</text>")
            children[id]?.let {
                out.append("<text class=\"children\" x=\"").append(bx + BOX_W / 2).append("\" y=\"").append(by + 44)
                    .append("\">").append(Html.escape(Html.shorten(it, 30))).append("</text>")
            }
            out.append("</g>\n")
        }
        out.append("</svg>\n")
    }

    /** The indexes of the links that close a cycle, found by a depth-first walk from the start. */
    private fun backLinks(ids: List<String>, links: List<Link>): Set<Int> {
        val out = HashMap<String, MutableList<Int>>()
        for ((i, l) in links.withIndex()) out.getOrPut(l.from) { ArrayList() } += i
        val state = HashMap<String, Int>() // 1 on the stack, 2 done
        val back = HashSet<Int>()

        fun visit(id: String) {
            state[id] = 1
            for (i in out[id].orEmpty()) {
                val to = links[i].to
                when (state[to]) {
                    1 -> back += i
                    null -> visit(to)
                }
            }
            state[id] = 2
        }
        visit(START)
        for (id in ids) if (state[id] == null) visit(id)
        return back
    }
}
