package dev.trellis.studio.internal

import dev.trellis.runtime.RunEvent
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/** A [RunEvent] as the JSON the API and the live stream send: `{type, sequence, timestamp, …}`. */
internal fun eventJson(event: RunEvent): JsonObject = buildJsonObject {
    put("type", event::class.simpleName)
    put("runId", event.runId)
    put("sequence", event.sequence)
    put("timestamp", event.timestamp.toString())
    if (event is RunEvent.NodeEvent) {
        put("nodeId", event.nodeId)
        put("path", event.path)
        put("execution", event.execution)
        if (event.task >= 0) put("task", event.task)
    }
    when (event) {
        is RunEvent.RunStarted -> put("graphId", event.graphId)
        is RunEvent.NodeRetrying -> {
            put("attempt", event.attempt)
            put("error", event.error.toString())
            put("delayMs", event.delay.toMillis())
        }
        is RunEvent.NodeCompleted -> {
            put("attempts", event.attempts)
            put("durationMs", event.duration.toMillis())
        }
        is RunEvent.NodeFailed -> {
            put("attempts", event.attempts)
            put("error", event.error.toString())
            event.routedTo?.let { put("routedTo", it) }
        }
        is RunEvent.Custom -> put("payload", fold(event.payload.toString()))
        is RunEvent.MetersCharged -> {
            put("charges", event.charges.toString())
            put("totals", event.totals.toString())
        }
        is RunEvent.NodeCompensationFailed -> put("error", event.error.toString())
        is RunEvent.EdgeTaken -> {
            put("from", event.from)
            put("to", event.to)
        }
        is RunEvent.CheckpointSaved -> {
            put("checkpoint", event.checkpoint)
            put("full", event.full)
        }
        is RunEvent.Terminal -> {
            put("status", event.result.status.name)
            event.result.error?.let { put("error", it.toString()) }
        }
        else -> Unit
    }
}

/** [text] cut to [max] characters, its length told when longer. */
internal fun fold(text: String, max: Int = 2_000): String =
    if (text.length > max) text.take(max) + "… (${text.length} chars)" else text
