package dev.trellis.runtime.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.Status
import dev.trellis.runtime.persistence.InterruptData
import dev.trellis.runtime.persistence.NodeData
import dev.trellis.runtime.persistence.PositionCodec
import dev.trellis.runtime.persistence.PositionData
import dev.trellis.runtime.persistence.TriggerData
import dev.trellis.runtime.persistence.WriteData

/**
 * Turns the loop's position into the [PositionData] of a checkpoint: everything when [full], otherwise only
 * what changed since the writer's last checkpoint (plus the small frontier: triggers, ready nodes, interrupts).
 * Nodes running or interrupted at this point are recorded as ready, with their execution not counted: they
 * run again on resume.
 */
internal object PositionEncoder {
    fun encode(
        graph: Graph,
        runId: String,
        status: String,
        full: Boolean,
        writer: Checkpointer,
        state: State,
        position: Position,
        nodeStatus: Array<Status>,
        interrupts: List<Execution>,
        errors: List<Throwable>,
    ): PositionData {
        val topology = graph.topology
        val size = topology.size
        val keys = topology.keys
        val stateJson = if (full) {
            val map = LinkedHashMap<String, kotlinx.serialization.json.JsonElement>()
            for (key in keys) {
                val value = state.valueAt(key.index)
                if (value !== State.Unset) map[key.name] = PositionCodec.encodeValue(key, value)
            }
            map
        } else {
            null
        }
        val writes = if (full) emptyList() else writer.writesSinceLast().map { (k, v) -> WriteData(keys[k].name, PositionCodec.encodeValue(keys[k], v)) }
        val versions = LinkedHashMap<String, Long>()
        val writers = LinkedHashMap<String, String>()
        for (key in keys) {
            if (!full && !writer.changedKey(key.index)) continue
            val v = state.versionAt(key.index)
            if (v != 0L) versions[key.name] = v
            position.lastWriter[key.index]?.let { writers[key.name] = it }
        }
        val rerun = BooleanArray(size)
        for (execution in position.running) if (execution != null) rerun[execution.index] = true
        for (execution in interrupts) rerun[execution.index] = true
        val nodes = LinkedHashMap<String, NodeData>()
        var total = 0
        for (i in 0 until size) {
            val finished = position.counts[i] - if (rerun[i]) 1 else 0
            total += finished
            if (full && finished == 0 && nodeStatus[i] == Status.PENDING) continue
            if (!full && !writer.changedNode(i)) continue
            nodes[topology.nodes[i].id] = NodeData(finished, nodeStatus[i].name)
        }
        val ready = ArrayList<String>()
        for (i in 0 until size) if (rerun[i]) ready += topology.nodes[i].id
        for (i in position.readyNodes()) if (!rerun[i]) ready += topology.nodes[i].id
        return PositionData(
            graphId = graph.id,
            runId = runId,
            status = status,
            stateSchema = graph.schema.name,
            stateVersion = graph.schema.version,
            state = stateJson,
            writes = writes,
            versions = versions,
            lastWriters = writers,
            version = position.version,
            nodes = nodes,
            triggers = position.triggeredNodes().map { TriggerData(topology.nodes[it].id, position.stamps[it]) },
            nextStamp = position.stampCounter,
            ready = ready,
            totalExecutions = total,
            interrupts = interrupts.map { InterruptData(it.node.id, it.interruptPayload ?: "") },
            errors = errors.map { it.toString() },
        )
    }}
