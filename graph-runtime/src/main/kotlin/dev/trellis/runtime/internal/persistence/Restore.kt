package dev.trellis.runtime.internal.persistence

import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.Restored
import dev.trellis.runtime.internal.checkpoint.TriggerData
import dev.trellis.runtime.internal.policies.Meters
import dev.trellis.runtime.internal.policies.meters
import dev.trellis.runtime.internal.policies.restoreCompensationLog
import dev.trellis.runtime.internal.policies.spentNanos
import dev.trellis.runtime.internal.scheduling.Engine

/*
 * Restoring an [Engine] from its checkpoints (`docs/persistence.md`): the position, node statuses, last writers,
 * meters and compensation log of a [Restored] run are put back before it starts; the run's time spent is set by the
 * engine.
 */

/** Puts back the position of [restored] into this engine, before the run starts. */
internal fun Engine.restore(restored: Restored) {
    val data = restored.data
    val counts = IntArray(topology.size)
    for ((id, node) in data.nodes) {
        val index = topology.indexOf(id)
        counts[index] = node.count
        recorder.nodeStatus[index] = Status.valueOf(node.status)
    }
    data.lastWriters.forEach { (key, node) ->
        graph.schema.keyOrNull(key)?.let {
            position.lastWriter[it.index] =
                node
        }
    }
    position.meters = Meters.decoded(data.meters, data.spentNanos)
    position.restore(
        counts,
        data.totalExecutions,
        data.version,
        data.triggers.sortedBy { it.stamp }.map { tokensOf(it) },
        data.ready.map { topology.indexOf(it) },
    )
    restoreCompensationLog(data.compensable, data.compensations, data.errors)
}

/**
 * The (node, channel, count) of a stored trigger. One stored without its source (the first format), or from an
 * edge the graph no longer has, goes to the node's first input channel.
 */
private fun Engine.tokensOf(trigger: TriggerData): Triple<Int, Int, Int> {
    val node = topology.indexOf(trigger.node)
    val channels = topology.channels
    val from = trigger.from?.let { topology.indexOf(it) } ?: -1
    val channel = if (from >= 0) channels.of(from, node) else -1
    if (channel >= 0) return Triple(node, channel, trigger.tokens)
    if (channels.start[node] == channels.start[node + 1]) {
        throw CheckpointFormatException(
            "The checkpoint holds a trigger of node '${trigger.node}', which no edge of graph '${graph.id}' " +
                "leads to any more; " +
                "resume the run with the graph version that wrote it, or fork from an earlier checkpoint.",
        )
    }
    return Triple(node, channels.start[node], trigger.tokens)
}
