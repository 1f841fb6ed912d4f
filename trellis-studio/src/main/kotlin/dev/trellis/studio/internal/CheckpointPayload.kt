package dev.trellis.studio.internal

import dev.trellis.checkpoint.CheckpointRecord
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.intOrNull
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.longOrNull
import java.time.Instant

/**
 * What the studio reads of one checkpoint's payload (the runtime's JSON envelope `{scope, schemaVersion, createdAt,
 * appData, data}`, `docs/persistence.md`), without the run's graph: node counts and statuses, pending interrupts,
 * errors, the writes of a delta (the write set of the execution it records), the child runs and map tasks, and the
 * whole state of a full checkpoint as JSON. Unknown fields are ignored, so a newer runtime's payload still reads.
 */
internal class CheckpointPayload private constructor(val data: JsonObject, val createdAt: Instant?) {
    class NodeCount(val count: Int, val status: String)

    class Interrupt(val node: String, val payload: String, val path: String?)

    class Write(val key: String, val value: JsonElement)

    /** The outcome of one compensation: its execution's path and number, and STARTED, COMPLETED, FAILED or CANCELLED. */
    class Compensation(val path: String, val execution: Int, val status: String, val error: String?)

    val status: String? get() = data.string("status")

    val stateVersion: Int? get() = data["stateVersion"]?.jsonPrimitive?.intOrNull

    val childrenOnly: Boolean get() = data.string("childrenOnly") == "true"

    val nodes: Map<String, NodeCount>
        get() = data.obj("nodes").mapValues { (_, v) ->
            val o = v.jsonObject
            NodeCount(o["count"]?.jsonPrimitive?.intOrNull ?: 0, o.string("status") ?: "PENDING")
        }

    val interrupts: List<Interrupt>
        get() = data.arr("interrupts").map {
            val o = it.jsonObject
            Interrupt(o.string("node") ?: "?", o.string("payload") ?: "", o.string("path"))
        }

    val errors: List<String> get() = data.arr("errors").mapNotNull { (it as? JsonPrimitive)?.contentOrNull }

    val writes: List<Write>
        get() = data.arr("writes").map {
            val o = it.jsonObject
            Write(o.string("key") ?: "?", o["value"] ?: JsonPrimitive(null as String?))
        }

    /** The whole state by key name (a full checkpoint), or null (a delta). */
    val state: Map<String, JsonElement>? get() = (data["state"] as? JsonObject)

    /** The child runs and map tasks by key (`research#2`, `research#1[3]`), each with its own checkpoint chain. */
    val children: Map<String, List<CheckpointPayload>>
        get() = data.obj("children").mapValues { (_, v) ->
            (v.jsonObject["chain"] as? JsonArray).orEmpty().mapNotNull { text ->
                (text as? JsonPrimitive)?.contentOrNull?.let(::parseOrNull)
            }
        }

    /** Whether a map task (a child key with `[i]`) finished. */
    fun childDone(key: String): Boolean =
        (data.obj("children")[key] as? JsonObject)?.get("done")?.jsonPrimitive?.contentOrNull == "true"

    /** The run's meter totals so far (the budget's meters, as decimal text), empty when nothing was charged. */
    val meters: Map<String, String>
        get() = data.obj("meters").mapNotNull {
            (k, v) ->
            (v as? JsonPrimitive)?.contentOrNull?.let { k to it }
        }.toMap()

    /** The compensations' outcomes so far, once the failed run compensates; else empty. */
    val compensations: List<Compensation>
        get() = data.arr("compensations").map {
            val o = it.jsonObject
            Compensation(
                o.string("path") ?: "?",
                o["execution"]?.jsonPrimitive?.intOrNull ?: 0,
                o.string("status") ?: "STARTED",
                o.string("error"),
            )
        }

    val totalExecutions: Long get() = data["totalExecutions"]?.jsonPrimitive?.longOrNull ?: 0

    companion object {
        private val json = Json { ignoreUnknownKeys = true }

        fun of(record: CheckpointRecord): CheckpointPayload? = parseOrNull(record.payload)

        fun parseOrNull(text: String): CheckpointPayload? = try {
            val envelope = json.parseToJsonElement(text).jsonObject
            val at = envelope.string("createdAt")?.let { runCatching { Instant.parse(it) }.getOrNull() }
            (envelope["data"] as? JsonObject)?.let { CheckpointPayload(it, at) }
        } catch (e: IllegalArgumentException) {
            null
        }

        private fun JsonObject.string(name: String): String? = (this[name] as? JsonPrimitive)?.contentOrNull

        private fun JsonObject.obj(name: String): JsonObject = this[name] as? JsonObject ?: JsonObject(emptyMap())

        private fun JsonObject.arr(name: String): List<JsonElement> = (this[name] as? JsonArray) ?: emptyList()
    }
}
