package dev.trellis.studio.timeline

import dev.trellis.runtime.Status
import dev.trellis.studio.timeline.TimelineMark.Kind
import java.time.Duration
import java.time.Instant

/** Text escaping for the page (which is well-formed XML as well as HTML, so tools can parse it). */
internal object Html {
    fun escape(text: String): String = buildString(text.length) {
        for (c in text) {
            when (c) {
                '<' -> append("&lt;")
                '>' -> append("&gt;")
                '&' -> append("&amp;")
                '"' -> append("&quot;")
                '\'' -> append("&#39;")
                else -> if (c < ' ' && c != '\n' && c != '\t') append(' ') else append(c)
            }
        }
    }

    fun shorten(text: String, max: Int): String = if (text.length <= max) text else text.take(max - 1) + "\u2026"
}

/**
 * Renders a [RunTimeline] as one HTML page: a header with the run's outcome, the timeline (an SVG: one row per
 * lane, one bar per execution, marks on top), the graph drawn with statuses ([GraphSvg]) with its Mermaid text, a
 * table per node and the final state. No script, no external resource.
 */
internal object TimelineHtml {
    private const val LABEL_W = 70
    private const val PLOT_W = 1100
    private const val LANE_H = 30
    private const val TOP = 34

    /**
     * The timeline alone (SVG and legend), as the studio's run page shows it under its own heading: the part of the
     * run in [window] (the whole run by default) across the plot's width.
     */
    fun timelineBlock(t: RunTimeline, window: TimelineWindow = TimelineWindow.whole(t.duration)): String =
        buildString { timeline(t, window) }

    fun render(t: RunTimeline): String = buildString {
        append("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n")
        append(
            "<meta charset=\"utf-8\"/>\n<title>",
        ).append(Html.escape("Run ${t.runId} of ${t.graphId}")).append("</title>\n")
        append("<style>").append(CSS).append("</style>\n</head>\n<body>\n")
        header(t)
        append("<h2>Timeline</h2>\n")
        timeline(t)
        append("<h2>Graph</h2>\n<div class=\"graph-box\">\n")
        GraphSvg.render(t.graph, t.nodes, this, t.childSummary())
        append("</div>\n<details><summary>Mermaid source</summary><pre class=\"mermaid-text\">")
            .append(Html.escape(t.mermaid)).append("</pre></details>\n")
        nodeTable(t)
        executionTable(t)
        stateTable(t)
        append("</body>\n</html>\n")
    }

    private fun StringBuilder.header(t: RunTimeline) {
        append("<header>\n<h1>").append(Html.escape(t.graphId)).append(" <span class=\"run-status status-")
            .append(t.status.name.lowercase()).append("\">").append(t.status.name).append("</span></h1>\n")
        append("<p class=\"meta\">run <code>").append(Html.escape(t.runId)).append("</code> · started ")
            .append(t.startedAt).append(" · ").append(formatDuration(t.duration)).append(" · ")
            .append(t.bars.size).append(" executions in ").append(t.laneCount).append(" lanes</p>\n")
        if (t.approximate) {
            append("<p class=\"note\">Rebuilt from the run's checkpoints: each bar spans from the checkpoint before ")
                .append("the execution to the one that records it; attempts, retries, custom events and exact times ")
                .append("are not stored in checkpoints.</p>\n")
        }
        for (error in t.errors) {
            append(
                "<p class=\"error\">",
            ).append(Html.escape(Html.shorten(error, 500))).append("</p>\n")
        }
        append("</header>\n")
    }

    private fun StringBuilder.timeline(t: RunTimeline, window: TimelineWindow = TimelineWindow.whole(t.duration)) {
        fun xOf(at: Instant): Double = LABEL_W + PLOT_W * window.fraction(Duration.between(t.startedAt, at))
        val lanes = maxOf(t.laneCount, 1)
        val height = TOP + lanes * LANE_H + 20
        val width = LABEL_W + PLOT_W + 50
        append("<div class=\"timeline-box\">\n")
        append("<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(width)
            .append("\" height=\"").append(height).append("\" viewBox=\"0 0 ").append(width).append(' ').append(height)
            .append("\">\n")
        // Axis: ticks at round fractions of the window.
        for ((fraction, label) in window.ticks(10)) {
            val x = LABEL_W + PLOT_W * fraction
            append("<line class=\"tick\" x1=\"").append(fmt(x)).append("\" y1=\"").append(TOP - 6).append("\" x2=\"")
                .append(fmt(x)).append("\" y2=\"").append(height - 16).append("\"/>")
            append("<text class=\"axis\" x=\"").append(fmt(x)).append("\" y=\"").append(height - 4).append("\">")
                .append(label).append("</text>\n")
        }
        append("<text class=\"lane-label\" x=\"4\" y=\"").append(TOP - 12).append("\">checkpoints</text>\n")
        val labels = t.laneLabels
        for (lane in 0 until lanes) {
            val y = TOP + lane * LANE_H
            val label = labels.getOrElse(lane) { "run" }
            append("<g class=\"lane\" data-lane=\"").append(lane).append("\" data-row=\"").append(Html.escape(label))
                .append("\">")
            append("<rect class=\"lane-bg\" x=\"").append(LABEL_W).append("\" y=\"").append(y).append("\" width=\"")
                .append(PLOT_W).append("\" height=\"").append(LANE_H).append("\"/>")
            append("<text class=\"lane-label\" x=\"4\" y=\"").append(y + 19).append("\"><title>")
                .append(Html.escape(label)).append("</title>").append(Html.escape(Html.shorten(label, 11)))
                .append("</text>\n")
            for (bar in t.bars) if (bar.lane == lane) bar(bar, y, ::xOf)
            append("</g>\n")
        }
        val laneOf = t.bars.associate { (it.path to it.execution) to it.lane }
        for (mark in t.marks) {
            val x = xOf(mark.at)
            if (x < LABEL_W - 0.5 || x > LABEL_W + PLOT_W + 0.5) continue
            val lane = if (mark.path == null) null else laneOf[mark.path to mark.execution]
            // Custom events sit on the lower edge of their bar, so they do not hide its label.
            val y = when {
                lane == null -> TOP - 16.0
                mark.kind == Kind.CUSTOM -> TOP + lane * LANE_H + LANE_H - 6.0
                else -> TOP + lane * LANE_H + LANE_H / 2.0
            }
            mark(mark, x, y)
        }
        append("</svg>\n</div>\n")
        legend()
    }

    private fun StringBuilder.bar(bar: TimelineBar, y: Int, xOf: (Instant) -> Double) {
        val start = xOf(bar.start)
        val end = xOf(bar.end)
        // Outside the window: left out; across its edges: cut at them.
        if (end < LABEL_W - 0.5 || start > LABEL_W + PLOT_W + 0.5) return
        val x1 = start.coerceIn(LABEL_W.toDouble(), LABEL_W + PLOT_W - 3.0)
        val w = maxOf(end.coerceAtMost(LABEL_W + PLOT_W.toDouble()) - x1, 3.0)
        append("<g class=\"bar status-").append(bar.status.name.lowercase()).append("\" data-node=\"")
            .append(Html.escape(bar.nodeId)).append("\" data-path=\"").append(Html.escape(bar.path))
            .append("\" data-execution=\"").append(bar.execution)
            .append("\" data-status=\"").append(bar.status.name).append("\" data-attempts=\"").append(bar.attempts)
            .append("\"><title>").append(Html.escape(bar.path)).append(" #").append(bar.execution).append(": ")
            .append(bar.status.name).append(", ").append(formatDuration(Duration.between(bar.start, bar.end)))
        if (bar.attempts > 1) append(", ").append(bar.attempts).append(" attempts")
        if (bar.error != null) append("\n").append(Html.escape(Html.shorten(bar.error, 300)))
        append(
            "</title><rect x=\"",
        ).append(fmt(x1)).append("\" y=\"").append(y + 4).append("\" width=\"").append(fmt(w))
            .append("\" height=\"").append(LANE_H - 8).append("\" rx=\"3\"/>")
        val label = "${bar.nodeId} #${bar.execution}"
        val fits = (w / 7).toInt()
        if (fits >= 3) {
            append("<text x=\"").append(fmt(x1 + 4)).append("\" y=\"").append(y + 19).append("\">")
                .append(Html.escape(Html.shorten(label, fits))).append("</text>")
        }
        append("</g>\n")
    }

    private fun StringBuilder.mark(mark: TimelineMark, x: Double, y: Double) {
        append(
            "<g class=\"mark mark-",
        ).append(mark.kind.name.lowercase()).append("\" data-kind=\"").append(mark.kind.name)
        if (mark.nodeId != null) append("\" data-node=\"").append(Html.escape(mark.nodeId))
        append("\"><title>").append(Html.escape(mark.kind.name.lowercase())).append(": ")
            .append(Html.escape(Html.shorten(mark.label, 300))).append("</title>")
        val cx = fmt(x)
        val cy = fmt(y)
        when (mark.kind) {
            Kind.CHECKPOINT -> append(
                "<path d=\"M ",
            ).append(cx).append(' ').append(fmt(y - 6)).append(" l 6 6 l -6 6 l -6 -6 z\"/>")
            Kind.RETRY -> append(
                "<path d=\"M ",
            ).append(cx).append(' ').append(fmt(y - 7)).append(" l 7 12 l -14 0 z\"/>")
            Kind.CUSTOM -> append("<circle cx=\"").append(cx).append("\" cy=\"").append(cy).append("\" r=\"3\"/>")
            Kind.FAILURE -> append("<path d=\"M ").append(fmt(x - 5)).append(' ').append(fmt(y - 5))
                .append(" l 10 10 m 0 -10 l -10 10\"/>")
            Kind.INTERRUPT -> append("<rect x=\"").append(fmt(x - 5)).append("\" y=\"").append(fmt(y - 7))
                .append("\" width=\"10\" height=\"14\" rx=\"2\"/>")
            Kind.BUDGET -> append("<path d=\"M ").append(fmt(x - 4)).append(' ').append(fmt(y + 4))
                .append(" l 8 0 l 0 -8 z\"/>")
            Kind.COMPENSATION -> append("<path d=\"M ").append(fmt(x - 5)).append(' ').append(fmt(y))
                .append(" l 10 -5 l 0 10 z\"/>") // ◀, as the legend says: undoing
        }
        append("</g>\n")
    }

    private fun StringBuilder.legend() {
        append("<p class=\"legend\">")
        for (status in listOf(
            Status.COMPLETED,
            Status.FAILED,
            Status.CANCELLED,
            Status.INTERRUPTED,
            Status.EXECUTING,
        )) {
            append("<span class=\"swatch status-").append(status.name.lowercase()).append("\"></span>")
                .append(status.name.lowercase()).append(' ')
        }
        append(
            " · marks: ◆ checkpoint ▲ retry ● custom event ✕ failure ▮ interrupt ◢ budget charge ◀ compensation (hover for details)</p>\n",
        )
    }

    private fun StringBuilder.nodeTable(t: RunTimeline) {
        append("<h2>Nodes</h2>\n<table class=\"nodes\">\n<thead><tr><th>node</th><th>status</th><th>executions</th>")
            .append("<th>attempts</th><th>time</th></tr></thead>\n<tbody>\n")
        for (node in t.nodes) {
            var time = Duration.ZERO
            for (bar in t.bars) if (bar.path == node.nodeId) time += Duration.between(bar.start, bar.end)
            append(
                "<tr data-node=\"",
            ).append(Html.escape(node.nodeId)).append("\"><td>").append(Html.escape(node.nodeId))
                .append(
                    "</td><td class=\"status-",
                ).append(node.status.name.lowercase()).append("\">").append(node.status.name)
                .append("</td><td>").append(node.executions).append("</td><td>")
                .append(if (node.attempts == 0 && t.approximate) "?" else node.attempts.toString())
                .append("</td><td>").append(formatDuration(time)).append("</td></tr>\n")
        }
        append("</tbody>\n</table>\n")
    }

    /** Every execution as a row, in start order: what a short loop looks like when its bars are thin. */
    private fun StringBuilder.executionTable(t: RunTimeline) {
        append("<h2>Executions</h2>\n<table class=\"executions\">\n<thead><tr><th>#</th><th>path</th>")
            .append(
                "<th>execution</th><th>status</th><th>start</th><th>time</th><th>attempts</th></tr></thead>\n<tbody>\n",
            )
        t.bars.forEachIndexed { i, bar ->
            append("<tr data-path=\"").append(Html.escape(bar.path)).append("\"><td>").append(i + 1).append("</td><td>")
                .append(
                    Html.escape(bar.path),
                ).append("</td><td>").append(bar.execution).append("</td><td class=\"status-")
                .append(bar.status.name.lowercase()).append("\">").append(bar.status.name).append("</td><td>+")
                .append(formatDuration(Duration.between(t.startedAt, bar.start))).append("</td><td>")
                .append(formatDuration(Duration.between(bar.start, bar.end))).append("</td><td>")
                .append(if (bar.attempts == 0 && t.approximate) "?" else bar.attempts.toString()).append("</td></tr>\n")
        }
        append("</tbody>\n</table>\n")
    }

    private fun StringBuilder.stateTable(t: RunTimeline) {
        append("<h2>Final state</h2>\n<table class=\"state\">\n<tbody>\n")
        for ((key, value) in t.finalState) {
            append("<tr data-key=\"").append(Html.escape(key)).append("\"><th>").append(Html.escape(key))
                .append("</th><td><pre>").append(Html.escape(value)).append("</pre></td></tr>\n")
        }
        if (t.finalState.isEmpty()) append("<tr><td>(no key set)</td></tr>\n")
        append("</tbody>\n</table>\n")
    }

    private fun fmt(v: Double): String = if (v ==
        Math.floor(v)
    ) {
        v.toLong().toString()
    } else {
        String.format(java.util.Locale.ROOT, "%.1f", v)
    }

    fun formatDuration(d: Duration): String {
        val nanos = d.toNanos()
        return when {
            nanos < 1_000_000 -> String.format(java.util.Locale.ROOT, "%.2f ms", nanos / 1e6)
            nanos < 10_000_000_000 -> String.format(java.util.Locale.ROOT, "%.0f ms", nanos / 1e6)
            else -> String.format(java.util.Locale.ROOT, "%.1f s", nanos / 1e9)
        }
    }

    private val CSS = """
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 20px 28px; color: #222; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 22px 0 8px; }
.meta { color: #555; margin: 0; } .note { color: #8a6d00; background: #fff8dc; padding: 6px 10px; }
.error { color: #b71c1c; background: #fdecea; padding: 6px 10px; font-family: monospace; white-space: pre-wrap; }
.run-status { font-size: 13px; padding: 2px 8px; border-radius: 10px; vertical-align: middle; }
.timeline-box, .graph-box { overflow-x: auto; border: 1px solid #ddd; border-radius: 6px; padding: 6px; background: #fcfcfc; }
svg text { font: 12px system-ui, sans-serif; stroke: none; fill: #222; }
.lane-bg { fill: #f4f6f8; stroke: #fff; stroke-width: 2; }
.lane-label { fill: #777; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
.tick { stroke: #e3e3e3; } .axis { fill: #888; text-anchor: middle; font-size: 11px; }
.bar rect { stroke-width: 1.2; } .bar text { fill: #111; pointer-events: none; }
.status-completed, .bar.status-completed rect, .gnode.status-completed rect, .swatch.status-completed { fill: #c8ecd0; stroke: #2e7d32; background: #c8ecd0; }
.status-failed, .bar.status-failed rect, .gnode.status-failed rect, .swatch.status-failed { fill: #f8c9c9; stroke: #c62828; background: #f8c9c9; }
.status-cancelled, .bar.status-cancelled rect, .gnode.status-cancelled rect, .swatch.status-cancelled { fill: #e4e4e4; stroke: #757575; background: #e4e4e4; }
.status-interrupted, .bar.status-interrupted rect, .gnode.status-interrupted rect, .swatch.status-interrupted { fill: #ffeaa0; stroke: #f9a825; background: #ffeaa0; }
.status-executing, .bar.status-executing rect, .gnode.status-executing rect, .swatch.status-executing { fill: #cfe0ff; stroke: #1565c0; background: #cfe0ff; }
.status-pending, .gnode.status-pending rect { fill: #fff; stroke: #9e9e9e; stroke-dasharray: 4 3; background: #fff; }
.swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid #999; margin: 0 4px 0 10px; vertical-align: -1px; }
.legend { color: #555; font-size: 12px; }
.mark path, .mark circle, .mark rect { stroke-width: 1.5; }
.mark-checkpoint path { fill: #5c6bc0; stroke: #283593; } .mark-retry path { fill: #ff9800; stroke: #e65100; }
.mark-custom circle { fill: #26a69a; stroke: #00695c; } .mark-failure path { stroke: #b71c1c; stroke-width: 3; fill: none; }
.mark-interrupt rect { fill: #fdd835; stroke: #f57f17; }
.mark-budget path { fill: #8e24aa; stroke: #4a148c; } .mark-compensation path { fill: #6d4c41; stroke: #3e2723; }
.edge-label { fill: #555; font-size: 11px; font-style: italic; } .gnode .children { fill: #555; font-size: 10px; }
table.executions td.status-completed, table.executions td.status-failed, table.executions td.status-interrupted { border-color: #ddd; }
.edge { fill: none; stroke: #555; stroke-width: 1.4; } .edge.conditional, .edge.back { stroke-dasharray: 5 4; }
.gnode text { text-anchor: middle; } .gnode .count { fill: #444; font-size: 11px; } .gnode .name { font-weight: 600; }
.terminal rect { fill: #37474f; } .terminal text { fill: #fff; text-anchor: middle; }
table { border-collapse: collapse; } th, td { border: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
table.nodes td.status-completed, table.nodes td.status-failed, table.nodes td.status-cancelled,
table.nodes td.status-interrupted, table.nodes td.status-executing, table.nodes td.status-pending { border-color: #ddd; }
table.state pre { margin: 0; white-space: pre-wrap; max-width: 1000px; font-size: 12px; }
.mermaid-text { background: #f6f6f6; padding: 8px; font-size: 12px; }
"""
}
