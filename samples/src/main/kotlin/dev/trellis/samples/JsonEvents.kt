package dev.trellis.samples

import dev.trellis.graph.State
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.agent.AgentEvent
import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonObjectBuilder
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/**
 * One event as a JSON object: type, sequence, runId, timestamp, a node event's path and task, and the event's own
 * fields; interrupts are keyed by path.
 */
internal fun RunEvent.toJson(): JsonObject = buildJsonObject {
    put("type", this@toJson.javaClass.simpleName)
    put("sequence", sequence)
    put("runId", runId)
    put("timestamp", timestamp.toString())
    if (this@toJson is RunEvent.NodeEvent) {
        put("path", path) // `research[2]/search` inside a map task's child run; the node id at the top level
        put("task", task) // the innermost map task's index, or -1
    }
    when (val e = this@toJson) {
        is RunEvent.RunStarted -> {
            put("graph", e.graphId)
            putState("input", e.input)
        }
        is RunEvent.NodeStarted -> {
            put("node", e.nodeId)
            put("execution", e.execution)
        }
        is RunEvent.NodeRetrying -> {
            put("node", e.nodeId)
            put("execution", e.execution)
            put("attempt", e.attempt)
            put("error", e.error.toString())
            put("delayMs", e.delay.toMillis())
        }
        is RunEvent.NodeCompleted -> {
            put("node", e.nodeId)
            put("execution", e.execution)
            put("attempts", e.attempts)
            put("durationMs", e.duration.toMillis())
        }
        is RunEvent.NodeFailed -> {
            put("node", e.nodeId)
            put("execution", e.execution)
            put("attempts", e.attempts)
            put("error", e.error.toString())
            put("durationMs", e.duration.toMillis())
            e.routedTo?.let { put("routedTo", it) }
        }
        is RunEvent.NodeCancelled, is RunEvent.NodeCompensating, is RunEvent.NodeCompensated -> {
            put("node", e.nodeId)
            put("execution", e.execution)
        }
        is RunEvent.NodeCompensationFailed -> {
            put("node", e.nodeId)
            put("execution", e.execution)
            put("error", e.error.toString())
        }
        is RunEvent.EdgeTaken -> {
            put("from", e.from)
            put("to", e.to)
        }
        is RunEvent.Custom -> {
            put("node", e.nodeId)
            put("execution", e.execution)
            put("payloadType", e.payload.javaClass.simpleName)
            when (val p = e.payload) {
                is AgentEvent.Token -> {
                    put("agent", p.agent)
                    put("text", p.text)
                }
                is AgentEvent.Step -> {
                    put("agent", p.agent)
                    put("step", p.description)
                }
                else -> put("payload", p.toString())
            }
        }
        is RunEvent.RunCompleted -> {
            put("status", e.result.status.name)
            put("durationMs", e.result.duration.toMillis())
            putState("state", e.result.state)
        }
        is RunEvent.RunFailed -> {
            put("status", e.result.status.name)
            put("error", e.error.toString())
            put("durationMs", e.result.duration.toMillis())
        }
        is RunEvent.RunCancelled -> {
            put("status", e.result.status.name)
            put("durationMs", e.result.duration.toMillis())
        }
        is RunEvent.RunInterrupted -> {
            put("status", e.result.status.name)
            put("interrupts", buildJsonObject { e.result.interrupts.forEach { put(it.path, it.payload) } })
        }
        is RunEvent.CheckpointSaved -> {
            put("checkpoint", e.checkpoint)
            put("full", e.full)
        }
        is RunEvent.NodeCacheHit -> {
            put("node", e.nodeId)
            put("execution", e.execution)
            put("key", e.key)
        }
        is RunEvent.NodeCacheStored -> {
            put("node", e.nodeId)
            put("execution", e.execution)
            put("key", e.key)
            e.expiresAt?.let { put("expiresAt", it.toString()) }
        }
        is RunEvent.MetersCharged -> {
            put("node", e.nodeId)
            put("execution", e.execution)
            put("charges", buildJsonObject { e.charges.forEach { (meter, amount) -> put(meter, amount) } })
            put("totals", buildJsonObject { e.totals.forEach { (meter, amount) -> put(meter, amount) } })
        }
    }
}

/**
 * Puts [state] as a JSON object: each set key's value written by the key's own serializer (the checkpoint
 * encoding), so lists are arrays, maps objects, numbers and booleans JSON primitives.
 */
private fun JsonObjectBuilder.putState(name: String, state: State) {
    put(
        name,
        buildJsonObject {
            for (key in state.schema.keys) {
                val value = state.getOrUnset(key)
                if (value === State.Unset) continue
                @Suppress("UNCHECKED_CAST")
                put(key.name, Json.encodeToJsonElement(key.serializer as KSerializer<Any?>, value))
            }
        },
    )
}
