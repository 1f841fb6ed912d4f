package dev.trellis.temporal.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunResult
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/** The JSON of a run's start request and of its result, as the workflow takes and returns them. */
internal object RunCodec {
    fun encodeRequest(graph: Graph, input: State, budget: Budget? = null): String {
        val request = LinkedHashMap<String, JsonElement>()
        request["graph"] = JsonPrimitive(graph.id)
        request["input"] = Payloads.encodeState(input, null)
        // Absent without a budget: the request of a run without one is as before budgets were wired.
        budget?.let { request["budget"] = BudgetCodec.encode(it) }
        return JsonObject(request).toString()
    }

    /** [result] as the caller reads it; [attemptsBefore] are the attempts of earlier segments, by node id. */
    fun encodeResult(result: RunResult, attemptsBefore: Map<String, Int> = emptyMap()): JsonObject {
        val nodes = result.nodes.mapValues { (id, node) ->
            JsonObject(
                mapOf(
                    "status" to JsonPrimitive(node.status.name),
                    "executions" to JsonPrimitive(node.executions),
                    "attempts" to JsonPrimitive(node.attempts + (attemptsBefore[id] ?: 0)),
                ),
            )
        }
        return JsonObject(
            mapOf<String, JsonElement>(
                "status" to JsonPrimitive(result.status.name),
                "state" to Payloads.encodeState(result.state, null),
                "nodes" to JsonObject(nodes),
                "error" to (result.error?.let { JsonPrimitive(it.message ?: it.toString()) } ?: JsonNull),
                "meters" to JsonObject(result.meters.mapValues { JsonPrimitive(it.value) }),
            ),
        )
    }
}
