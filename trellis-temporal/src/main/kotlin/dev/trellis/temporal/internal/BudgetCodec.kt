package dev.trellis.temporal.internal

import dev.trellis.runtime.Budget
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.double
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlin.time.Duration.Companion.milliseconds

/**
 * A run's [Budget] in its start request (and in the request of each segment it continues as new in): the workflow
 * runs the engine with it, so its limits keep their meaning (`docs/semantics.md` §13.4) in workflow time.
 */
internal object BudgetCodec {
    fun encode(budget: Budget): JsonObject {
        val fields = LinkedHashMap<String, JsonElement>()
        budget.maxNodeExecutions?.let { fields["maxNodeExecutions"] = JsonPrimitive(it) }
        budget.maxWallTime?.let { fields["maxWallTimeMillis"] = JsonPrimitive(it.inWholeMilliseconds) }
        fields["meters"] = JsonObject(budget.meters.mapValues { JsonPrimitive(it.value) })
        return JsonObject(fields)
    }

    fun decode(json: JsonElement): Budget {
        val obj = json.jsonObject
        var budget = Budget()
        obj["maxNodeExecutions"]?.let { budget = budget.withMaxNodeExecutions(it.jsonPrimitive.int) }
        obj["maxWallTimeMillis"]?.let { budget = budget.withMaxWallTime(it.jsonPrimitive.long.milliseconds) }
        for ((meter, limit) in obj["meters"]?.jsonObject.orEmpty()) {
            budget =
                budget.withMeter(meter, limit.jsonPrimitive.double)
        }
        return budget
    }
}
