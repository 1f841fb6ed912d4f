package dev.trellis.runtime.internal.checkpoint

import kotlinx.serialization.Serializable
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject

/** The JSON envelope of every snapshot and checkpoint payload (format of seed 003). */
@Serializable
internal class Envelope(
    val scope: String,
    val schemaVersion: Int,
    val createdAt: String,
    val appData: JsonObject = JsonObject(emptyMap()),
    val data: JsonElement,
)

/**
 * A run's position as stored: the whole of it ([state] set) or what changed since the previous checkpoint
 * ([writes], and only the changed [versions], [lastWriters] and [nodes]). The frontier (triggers, ready
 * nodes, interrupts) is small and always complete.
 */
@Serializable
internal class PositionData(
    val graphId: String,
    val runId: String,
    val status: String,
    val stateSchema: String,
    val stateVersion: Int,
    val state: Map<String, JsonElement>? = null,
    val writes: List<WriteData> = emptyList(),
    val versions: Map<String, Long> = emptyMap(),
    val lastWriters: Map<String, String> = emptyMap(),
    val version: Long,
    val nodes: Map<String, NodeData> = emptyMap(),
    val triggers: List<TriggerData> = emptyList(),
    /** Written by the first checkpoint format (trigger stamps); read and ignored. */
    val nextStamp: Long = 0,
    val ready: List<String> = emptyList(),
    val totalExecutions: Int,
    val interrupts: List<InterruptData> = emptyList(),
    val errors: List<String> = emptyList(),
)

@Serializable
internal class WriteData(val key: String, val value: JsonElement)

@Serializable
internal class NodeData(val count: Int, val status: String)

/**
 * [tokens] waiting on the input channel from node [from] to node [node]; [stamp] orders the nodes by when they came
 * to hold a trigger. The first format stored neither [from] nor [tokens]: such a trigger is one token on the node's
 * first channel.
 */
@Serializable
internal class TriggerData(val node: String, val stamp: Long, val from: String? = null, val tokens: Int = 1)

@Serializable
internal class InterruptData(val node: String, val payload: String)
