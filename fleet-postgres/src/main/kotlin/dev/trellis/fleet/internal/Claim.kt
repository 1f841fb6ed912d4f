package dev.trellis.fleet.internal

import dev.trellis.fleet.FleetInterrupt
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/*
 * Fleet claims (`docs/scale-out.md`): what a worker holds once it claimed a run from the queue — the run, its input,
 * its attempt and the answers to its interrupts, and the run's store lease when the claim took it too — and how a
 * paused run's interrupts and answers are stored in the queue. The claim statement itself (`FOR UPDATE SKIP
 * LOCKED`) is `Queue.claim`; when a worker's claim loop claims is `ClaimPacing.kt`'s.
 */

/** A claimed run, as the claim statement returned it. */
internal class Claim(
    val runId: String,
    val graphKey: String,
    val input: String,
    val attempt: Int,
    val answers: Map<String, String>,
) {
    /** The run's store lease, when it was claimed with the run ([StoreLeases.claim]). */
    var granted: StoreLeases.Granted? = null
}

/** The interrupts of a paused run as the queue stores them. */
internal fun encodeInterrupts(interrupts: List<FleetInterrupt>): String = JsonArray(
    interrupts.map {
        JsonObject(
            mapOf("node" to JsonPrimitive(it.nodeId), "payload" to JsonPrimitive(it.payload)),
        )
    },
).toString()

/** The interrupts stored by [encodeInterrupts]. */
internal fun decodeInterrupts(text: String?): List<FleetInterrupt> = if (text == null) {
    emptyList()
} else {
    Json.parseToJsonElement(text).jsonArray.map {
        val o = it.jsonObject
        FleetInterrupt(o.getValue("node").jsonPrimitive.content, o.getValue("payload").jsonPrimitive.content)
    }
}

/** The answers stored with a run: one JSON object of strings. */
internal fun decodeAnswers(text: String?): Map<String, String> = if (text == null) {
    emptyMap()
} else {
    Json.parseToJsonElement(text).jsonObject.mapValues { (_, v) -> v.jsonPrimitive.content }
}
