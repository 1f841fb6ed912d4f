package dev.trellis.runtime.internal.checkpoint

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.Topology
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.Checkpointer
import dev.trellis.runtime.internal.Execution
import dev.trellis.runtime.internal.Position
import kotlinx.serialization.builtins.ListSerializer
import java.time.Instant

/**
 * Turns the loop's position into checkpoint payloads: [full] builds the whole [PositionData]; [delta] writes only
 * what changed since the writer's last checkpoint (plus the small frontier: triggers, ready nodes, interrupts)
 * straight to the envelope's JSON text, without intermediate objects, because it runs after every step. Both
 * read back through the same [PositionData] decoder. Nodes running or interrupted at this point are recorded as
 * ready, with their execution not counted: they run again on resume.
 */
internal object PositionEncoder {
    fun full(
        graph: Graph,
        runId: String,
        status: String,
        state: State,
        position: Position,
        nodeStatus: Array<Status>,
        interrupts: List<Execution>,
        errors: List<Throwable>,
        children: Map<String, ChildData> = emptyMap(),
        saga: dev.trellis.runtime.internal.Saga? = null,
    ): PositionData {
        val topology = graph.topology
        val size = topology.size
        val keys = topology.keys
        val stateJson = LinkedHashMap<String, kotlinx.serialization.json.JsonElement>()
        val versions = LinkedHashMap<String, Long>()
        val writers = LinkedHashMap<String, String>()
        for (key in keys) {
            val value = state.valueAt(key.index)
            if (value !== State.Unset) stateJson[key.name] = PositionCodec.encodeValue(key, value)
            val v = state.versionAt(key.index)
            if (v != 0L) versions[key.name] = v
            position.lastWriter[key.index]?.let { writers[key.name] = it }
        }
        val rerun = rerun(position, interrupts)
        val nodes = LinkedHashMap<String, NodeData>()
        for (i in 0 until size) {
            val finished = position.counts[i] - if (rerun[i]) 1 else 0
            if (finished == 0 && nodeStatus[i] == Status.PENDING) continue
            nodes[topology.nodes[i].id] = NodeData(finished, nodeStatus[i].name)
        }
        return PositionData(
            graphId = graph.id,
            runId = runId,
            status = status,
            stateSchema = graph.schema.name,
            stateVersion = graph.schema.version,
            state = stateJson,
            versions = versions,
            lastWriters = writers,
            version = position.version,
            nodes = nodes,
            triggers = triggers(topology, position),
            ready = readyIds(graph, position, rerun),
            totalExecutions = finishedExecutions(position, rerun),
            interrupts = interruptData(interrupts),
            errors = errors.map { it.toString() },
            children = HashMap(children),
            meters = position.meters?.encoded() ?: emptyMap(),
            spentNanos = position.meters?.spentNanos ?: 0,
            compensable = saga?.entries?.map { dev.trellis.runtime.internal.encodeCompensable(it) } ?: emptyList(),
            compensations = saga?.outcomes?.toList(),
        )
    }

    /** The envelope of a delta checkpoint, as JSON text; the same fields a [PositionData] of a delta has. */
    fun delta(
        graph: Graph,
        runId: String,
        status: String,
        writer: Checkpointer,
        state: State,
        position: Position,
        nodeStatus: Array<Status>,
        interrupts: List<Execution>,
        errors: List<Throwable>,
        createdAt: Instant,
        saga: dev.trellis.runtime.internal.Saga? = null,
    ): String {
        val topology = graph.topology
        val keys = topology.keys
        val out = writer.payloadBuffer()
        out.append("{\"scope\":").appendJson(RUN_SCOPE)
            .append(",\"schemaVersion\":").append(FORMAT_VERSION)
            .append(",\"createdAt\":\"").appendIso(createdAt).append('"')
            .append(",\"appData\":{},\"data\":{")
        out.append("\"graphId\":").appendJson(graph.id)
            .append(",\"runId\":").appendJson(runId)
            .append(",\"status\":").appendJson(status)
            .append(",\"stateSchema\":").appendJson(graph.schema.name)
            .append(",\"stateVersion\":").append(graph.schema.version)
        out.append(",\"writes\":[")
        for (i in 0 until writer.writeCount) {
            if (i > 0) out.append(',')
            val key = keys[writer.writeKeyAt(i)]
            out.append("{\"key\":").appendJson(key.name).append(",\"value\":")
            PositionCodec.appendValueText(out, key, writer.writeValueAt(i))
            out.append('}')
        }
        out.append("],\"versions\":{")
        var first = true
        for (i in 0 until writer.changedKeys.size) {
            val k = writer.changedKeys.at(i)
            val v = state.versionAt(k)
            if (v == 0L) continue
            if (!first) out.append(',')
            first = false
            out.appendJson(keys[k].name).append(':').append(v)
        }
        out.append("},\"lastWriters\":{")
        first = true
        for (i in 0 until writer.changedKeys.size) {
            val k = writer.changedKeys.at(i)
            val node = position.lastWriter[k] ?: continue
            if (!first) out.append(',')
            first = false
            out.appendJson(keys[k].name).append(':').appendJson(node)
        }
        out.append("},\"version\":").append(position.version)
        val rerun = rerun(position, interrupts, writer.rerunBuffer)
        out.append(",\"nodes\":{")
        for (i in 0 until writer.changedNodes.size) {
            val n = writer.changedNodes.at(i)
            if (i > 0) out.append(',')
            val finished = position.counts[n] - if (rerun[n]) 1 else 0
            out.appendJson(
                topology.nodes[n].id,
            ).append(":{\"count\":").append(finished).append(",\"status\":").appendJson(nodeStatus[n].name).append('}')
        }
        out.append("},\"triggers\":[")
        if (position.triggeredSize > 0) {
            val triggers = triggers(topology, position)
            for (i in triggers.indices) {
                if (i > 0) out.append(',')
                val t = triggers[i]
                out.append("{\"node\":").appendJson(t.node).append(",\"stamp\":").append(t.stamp)
                    .append(",\"from\":").appendJson(t.from!!).append(",\"tokens\":").append(t.tokens).append('}')
            }
        }
        out.append("],\"ready\":[")
        // As readyIds lists them, written without the list.
        val nodes = topology.nodes
        first = true
        for (i in rerun.indices) {
            if (!rerun[i]) continue
            if (!first) out.append(',')
            first = false
            out.appendJson(nodes[i].id)
        }
        for (r in 0 until position.readyCount) {
            val i = position.readyAt(r)
            if (rerun[i]) continue
            if (!first) out.append(',')
            first = false
            out.appendJson(nodes[i].id)
        }
        out.append("],\"totalExecutions\":").append(finishedExecutions(position, rerun))
        out.append(",\"interrupts\":[")
        val pending = interruptData(interrupts)
        for (i in pending.indices) {
            if (i > 0) out.append(',')
            val interrupt = pending[i]
            out.append("{\"node\":").appendJson(interrupt.node).append(",\"payload\":").appendJson(interrupt.payload)
            if (interrupt.path != null) out.append(",\"path\":").appendJson(interrupt.path)
            out.append('}')
        }
        out.append("],\"errors\":[")
        for (i in errors.indices) {
            if (i > 0) out.append(',')
            out.appendJson(errors[i].toString())
        }
        out.append(']')
        val meters = position.meters
        if (meters != null) {
            out.append(",\"meters\":{")
            var firstMeter = true
            for ((meter, total) in meters.totals) {
                if (!firstMeter) out.append(',')
                firstMeter = false
                out.appendJson(meter).append(':').appendJson(total.toPlainString())
            }
            out.append("},\"spentNanos\":").append(meters.spentNanos)
        }
        if (saga != null) appendSaga(out, saga)
        return writer.payloadOf(out.append("}}"))
    }

    /** The compensable executions completed since the last checkpoint, and the compensations' progress. */
    private fun appendSaga(out: StringBuilder, saga: dev.trellis.runtime.internal.Saga) {
        val entries = saga.entries
        if (saga.saved < entries.size) {
            out.append(",\"compensable\":[")
            for (i in saga.saved until entries.size) {
                if (i > saga.saved) out.append(',')
                val data = dev.trellis.runtime.internal.encodeCompensable(entries[i])
                out.append(PersistenceJson.encodeToString(CompensableData.serializer(), data))
            }
            out.append(']')
        }
        val outcomes = saga.outcomes ?: return
        out.append(",\"compensations\":")
        out.append(PersistenceJson.encodeToString(ListSerializer(OutcomeData.serializer()), outcomes))
    }

    /**
     * The pending interrupts of [interrupts]: one per node that asked, or, for a composite node, one per interrupt
     * of its child runs and tasks, with its path. (A composite node whose child run was drained has none.)
     */
    private fun interruptData(interrupts: List<Execution>): List<InterruptData> {
        if (interrupts.isEmpty()) return emptyList()
        val data = ArrayList<InterruptData>(interrupts.size)
        for (i in interrupts.indices) {
            val execution = interrupts[i]
            val nested = execution.nestedInterrupts
            if (nested == null) {
                val path = if (execution.path == execution.node.id) null else execution.path
                data += InterruptData(execution.node.id, execution.interruptPayload ?: "", path)
            } else {
                for (leaf in nested) data += InterruptData(execution.node.id, leaf.payload, leaf.path)
            }
        }
        return data
    }

    /** The nodes whose execution is running or interrupted: recorded as ready, their execution not counted. */
    private fun rerun(
        position: Position,
        interrupts: List<Execution>,
        into: BooleanArray = BooleanArray(position.counts.size),
    ): BooleanArray {
        val rerun = into.also { it.fill(false) }
        for (execution in position.running) if (execution != null) rerun[execution.index] = true
        for (i in interrupts.indices) rerun[interrupts[i].index] = true
        return rerun
    }

    private fun finishedExecutions(position: Position, rerun: BooleanArray): Int {
        var total = position.totalExecutions
        for (r in rerun) if (r) total--
        return total
    }

    private fun readyIds(graph: Graph, position: Position, rerun: BooleanArray): List<String> {
        val nodes = graph.topology.nodes
        val ready = ArrayList<String>()
        for (i in rerun.indices) if (rerun[i]) ready += nodes[i].id
        for (i in position.readyNodes()) if (!rerun[i]) ready += nodes[i].id
        return ready
    }

    /** The tokens waiting on each input channel, nodes in the order they came to hold a trigger (the stamp). */
    private fun triggers(topology: Topology, position: Position): List<TriggerData> {
        val channels = topology.channels
        val triggered = position.triggeredNodes()
        val result = ArrayList<TriggerData>(triggered.size)
        for ((order, t) in triggered.withIndex()) {
            for (c in channels.start[t] until channels.start[t + 1]) {
                val count = position.tokens[c]
                if (count >
                    0
                ) {
                    result +=
                        TriggerData(topology.nodes[t].id, order.toLong(), topology.nodes[channels.source[c]].id, count)
                }
            }
        }
        return result
    }
}

/** Appends [text] as a JSON string literal (RFC 8259 escaping). */
internal fun StringBuilder.appendJson(text: String): StringBuilder {
    append('"')
    for (c in text) {
        when {
            c == '"' -> append("\\\"")
            c == '\\' -> append("\\\\")
            c == '\n' -> append("\\n")
            c == '\r' -> append("\\r")
            c == '\t' -> append("\\t")
            c < ' ' -> append("\\u").append(HEX[c.code shr 12 and 15]).append(HEX[c.code shr 8 and 15]).append(
                HEX[
                    c.code shr
                        4 and
                        15,
                ],
            ).append(HEX[c.code and 15])
            else -> append(c)
        }
    }
    return append('"')
}

private const val HEX = "0123456789abcdef"
