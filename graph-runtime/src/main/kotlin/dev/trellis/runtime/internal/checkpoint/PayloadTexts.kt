package dev.trellis.runtime.internal.checkpoint

import dev.trellis.graph.Topology
import dev.trellis.runtime.Status

/**
 * The pieces of checkpoint payload text that depend on the graph's [topology] only — node ids and key names as JSON
 * strings, with what always follows them — made once per graph (held by its `GraphRuntime`), so that
 * [PositionEncoder] copies them instead of escaping the same names again at every step.
 */
internal class PayloadTexts(topology: Topology) {
    /** Each node's id as a JSON string, by node index. */
    val nodeIds: Array<String> = Array(topology.size) { quoted(topology.nodes[it].id) }

    /** `"<node id>":{"count":`, by node index: the start of a node's entry in `nodes`. */
    val nodeEntries: Array<String> = Array(topology.size) { nodeIds[it] + ":{\"count\":" }

    /** Each key's name as a JSON string followed by `:`, by key index. */
    val keyNames: Array<String> = Array(topology.keys.size) { quoted(topology.keys[it].name) + ":" }

    /** `{"key":"<name>","value":`, by key index: the start of a delta's write. */
    val writeHeads: Array<String> =
        Array(topology.keys.size) { "{\"key\":" + quoted(topology.keys[it].name) + ",\"value\":" }

    private companion object {
        fun quoted(text: String): String = StringBuilder(text.length + 2).appendJson(text).toString()
    }
}

/** `,"status":"<status>"}`, by [Status.ordinal]: the end of a node's entry in `nodes`. */
internal val NODE_STATUS_ENDS: Array<String> = Status.entries.map { ",\"status\":\"${it.name}\"}" }.toTypedArray()
