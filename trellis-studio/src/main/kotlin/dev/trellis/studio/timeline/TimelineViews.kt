package dev.trellis.studio.timeline

import dev.trellis.graph.Graph
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.addJsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray
import java.time.Duration

/** A [RunTimeline] as the studio's API sends it: its drawings (SVG text) and its bars and marks as JSON. */
internal object TimelineViews {
    fun graphSvg(t: RunTimeline): String = buildString { GraphSvg.render(t.graph, t.nodes, this, t.childSummary()) }

    fun emptyGraphSvg(graph: Graph): String = buildString { GraphSvg.render(graph, emptyList(), this) }

    fun json(t: RunTimeline): JsonElement = buildJsonObject {
        put("runId", t.runId)
        put("status", t.status.name)
        put("approximate", t.approximate)
        put("startedAt", t.startedAt.toString())
        put("durationMs", t.duration.toMillis())
        put("svg", TimelineHtml.timelineBlock(t))
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
