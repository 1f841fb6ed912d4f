package dev.trellis.studio.timeline

import dev.trellis.graph.Graph
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.addJsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray
import kotlinx.serialization.json.putJsonObject
import java.time.Duration

/** A [RunTimeline] as the studio's API sends it: its drawings (SVG text) and its bars and marks as JSON. */
internal object TimelineViews {
    fun graphSvg(t: RunTimeline): String = buildString { GraphSvg.render(t.graph, t.nodes, this, t.childSummary()) }

    fun emptyGraphSvg(graph: Graph): String = buildString { GraphSvg.render(graph, emptyList(), this) }

    /** [t] as JSON, its SVG drawing the part of the run in [window] (see [TimelineHtml.timelineBlock]). */
    fun json(t: RunTimeline, window: TimelineWindow = TimelineWindow.whole(t.duration)): JsonElement = buildJsonObject {
        put("runId", t.runId)
        put("status", t.status.name)
        put("approximate", t.approximate)
        put("startedAt", t.startedAt.toString())
        put("durationMs", t.duration.toMillis())
        put("durationUs", t.duration.toNanos() / 1_000)
        putJsonObject("window") {
            put("fromUs", window.from.toNanos() / 1_000)
            put("toUs", window.to.toNanos() / 1_000)
            put("zoom", window.zoom)
        }
        put("svg", TimelineHtml.timelineBlock(t, window))
        putJsonArray("lanes") { t.laneLabels.forEach { add(JsonPrimitive(it)) } }
        putJsonArray("executions") {
            for (bar in t.bars) {
                addJsonObject {
                    put("nodeId", bar.nodeId)
                    put("path", bar.path)
                    put("row", bar.row.ifEmpty { "run" })
                    put("execution", bar.execution)
                    put("status", bar.status.name)
                    put("lane", bar.lane)
                    put("startMs", Duration.between(t.startedAt, bar.start).toMillis())
                    put("durationMs", Duration.between(bar.start, bar.end).toMillis())
                    put("startUs", Duration.between(t.startedAt, bar.start).toNanos() / 1_000)
                    put("durationUs", Duration.between(bar.start, bar.end).toNanos() / 1_000)
                    put("attempts", bar.attempts)
                    put("error", bar.error)
                }
            }
        }
        putJsonArray("marks") {
            for (mark in t.marks) {
                addJsonObject {
                    put("kind", mark.kind.name)
                    put("path", mark.path)
                    put("execution", mark.execution)
                    put("atMs", Duration.between(t.startedAt, mark.at).toMillis())
                    put("label", fold(mark.label))
                }
            }
        }
    }
}
