package dev.trellis.runtime.internal.checkpoint

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.Topology
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.persistence.Checkpointer
import dev.trellis.runtime.internal.scheduling.Position
import kotlinx.serialization.builtins.ListSerializer
import java.time.Instant

/**
 * Turns the loop's position into checkpoint payloads, written straight to the envelope's JSON text without
 * intermediate objects, because it runs after every step: a full checkpoint holds the whole position (`state`, every
 * key's version and last writer, every node that ran, the children in flight, every compensable execution); a
 * delta only what changed since the writer's last checkpoint (`writes`, and the changed versions, last writers and
 * nodes). Both carry the small frontier (triggers, ready nodes, interrupts) in full, and both read back through the
 * same [PositionData] decoder. Nodes running or interrupted at this point are recorded as ready, with their
 * execution not counted: they run again on resume.
 */
internal object PositionEncoder {
    /** What follows `createdAt` up to the run's status: the same for every checkpoint of a run. */
    fun runHead(graph: Graph, runId: String): String = StringBuilder(64)
        .append("\",\"appData\":{},\"data\":{\"graphId\":").appendJson(graph.id)
        .append(",\"runId\":").appendJson(runId)
        .append(",\"status\":")
        .toString()

    /** What follows the status: the state schema's name and version. */
    fun schemaText(graph: Graph): String = StringBuilder(48)
        .append(",\"stateSchema\":").appendJson(graph.schema.name)
        .append(",\"stateVersion\":").append(graph.schema.version)
        .toString()

    /** The envelope of a checkpoint ([full] or a delta against [writer]'s last one) of [writer]'s run, as JSON text. */
    fun payload(
        graph: Graph,
        status: String,
        full: Boolean,
        writer: Checkpointer,
        state: State,
        position: Position,
        nodeStatus: Array<Status>,
        interrupts: List<Execution>,
        errors: List<Throwable>,
        createdAt: Instant,
        compensationLog: dev.trellis.runtime.internal.policies.CompensationLog? = null,
    ): String {
        val topology = graph.topology
        val keys = topology.keys
        val out = writer.payloadBuffer()
        out.append(ENVELOPE_HEAD)
        writer.iso.append(out, createdAt).append(writer.payloadHead).appendJson(status).append(writer.payloadSchema)
        val texts = writer.texts
        if (full) {
            appendState(out, keys, texts, state, position)
        } else {
            appendChanges(out, keys, texts, writer, state, position)
        }
        out.append(",\"version\":").append(position.version)
        // Usually nothing runs again (a step's checkpoint is saved when nothing else runs): no pass over the nodes.
        val rerunning = position.runningCount > 0 || interrupts.isNotEmpty()
        val rerun = rerun(position, interrupts, writer, rerunning)
        out.append(",\"nodes\":{")
        var first = true
        val nodeCount = if (full) topology.size else writer.changedNodes.size
        for (i in 0 until nodeCount) {
            val n = if (full) i else writer.changedNodes.at(i)
            val finished = position.counts[n] - if (rerunning && rerun[n]) 1 else 0
            if (full && finished == 0 && nodeStatus[n] == Status.PENDING) continue
            if (!first) out.append(',')
            first = false
            out.append(texts.nodeEntries[n]).append(finished).append(NODE_STATUS_ENDS[nodeStatus[n].ordinal])
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
        // The nodes that run again first, then the ready queue in its order.
        first = true
        if (rerunning) {
            for (i in rerun.indices) {
                if (!rerun[i]) continue
                if (!first) out.append(',')
                first = false
                out.append(texts.nodeIds[i])
            }
        }
        for (r in 0 until position.readyCount) {
            val i = position.readyAt(r)
            if (rerunning && rerun[i]) continue
            if (!first) out.append(',')
            first = false
            out.append(texts.nodeIds[i])
        }
        val executions = if (rerunning) finishedExecutions(position, rerun) else position.totalExecutions
        out.append("],\"totalExecutions\":").append(executions)
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
        if (full && writer.children.isNotEmpty()) appendChildren(out, writer.children)
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
        if (compensationLog != null) {
            appendCompensationLog(out, compensationLog, from = if (full) 0 else compensationLog.saved)
        }
        return writer.payloadOf(out.append("}}"))
    }

    /** A full checkpoint's `state`, and every key's version and last writer. */
    private fun appendState(
        out: StringBuilder,
        keys: Array<StateKey<*>>,
        texts: PayloadTexts,
        state: State,
        position: Position,
    ) {
        out.append(",\"state\":{")
        var first = true
        for (key in keys) {
            val value = state.valueAt(key.index)
            if (value === State.Unset) continue
            if (!first) out.append(',')
            first = false
            out.append(texts.keyNames[key.index])
            PositionCodec.appendValueText(out, key, value)
        }
        out.append('}')
        appendVersionsAndWriters(out, texts, state, position, keys.size) { keys[it].index }
    }

    /** A delta's `writes` since [writer]'s last checkpoint, and the changed keys' versions and last writers. */
    private fun appendChanges(
        out: StringBuilder,
        keys: Array<StateKey<*>>,
        texts: PayloadTexts,
        writer: Checkpointer,
        state: State,
        position: Position,
    ) {
        out.append(",\"writes\":[")
        for (i in 0 until writer.writeCount) {
            if (i > 0) out.append(',')
            val k = writer.writeKeyAt(i)
            out.append(texts.writeHeads[k])
            PositionCodec.appendValueText(out, keys[k], writer.writeValueAt(i))
            out.append('}')
        }
        out.append(']')
        val changed = writer.changedKeys
        appendVersionsAndWriters(out, texts, state, position, changed.size) { changed.at(it) }
    }

    /** `versions` and `lastWriters` of the [count] keys whose indices [keyAt] gives (unset ones left out). */
    private inline fun appendVersionsAndWriters(
        out: StringBuilder,
        texts: PayloadTexts,
        state: State,
        position: Position,
        count: Int,
        keyAt: (Int) -> Int,
    ) {
        out.append(",\"versions\":{")
        var first = true
        for (i in 0 until count) {
            val k = keyAt(i)
            val v = state.versionAt(k)
            if (v == 0L) continue
            if (!first) out.append(',')
            first = false
            out.append(texts.keyNames[k]).append(v)
        }
        out.append("},\"lastWriters\":{")
        first = true
        for (i in 0 until count) {
            val k = keyAt(i)
            val node = position.lastWriter[k] ?: continue
            if (!first) out.append(',')
            first = false
            out.append(texts.keyNames[k]).appendJson(node)
        }
        out.append('}')
    }

    /** A full checkpoint's child runs and map tasks in flight (rare: only composite nodes have them). */
    private fun appendChildren(out: StringBuilder, children: Map<String, ChildData>) {
        out.append(",\"children\":{")
        var first = true
        for ((key, child) in children) {
            if (!first) out.append(',')
            first = false
            out.appendJson(key).append(':').append(PersistenceJson.encodeToString(ChildData.serializer(), child))
        }
        out.append('}')
    }

    /** The compensable executions completed since entry [from], and the compensations' progress. */
    private fun appendCompensationLog(
        out: StringBuilder,
        log: dev.trellis.runtime.internal.policies.CompensationLog,
        from: Int,
    ) {
        val entries = log.entries
        if (from < entries.size) {
            out.append(",\"compensable\":[")
            for (i in from until entries.size) {
                if (i > from) out.append(',')
                val data = dev.trellis.runtime.internal.policies.encodeCompensable(entries[i])
                out.append(PersistenceJson.encodeToString(CompensableData.serializer(), data))
            }
            out.append(']')
        }
        val outcomes = log.outcomes ?: return
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

    /**
     * The nodes whose execution is running or interrupted: recorded as ready, their execution not counted. Filled in
     * [writer]'s buffer only when [rerunning] (some are); otherwise the buffer is returned unread.
     */
    private fun rerun(
        position: Position,
        interrupts: List<Execution>,
        writer: Checkpointer,
        rerunning: Boolean,
    ): BooleanArray {
        val rerun = writer.rerunBuffer
        if (!rerunning) return rerun
        if (writer.rerunSet) rerun.fill(false)
        writer.rerunSet = true
        for (execution in position.running) if (execution != null) rerun[execution.index] = true
        for (i in interrupts.indices) rerun[interrupts[i].index] = true
        return rerun
    }

    private fun finishedExecutions(position: Position, rerun: BooleanArray): Int {
        var total = position.totalExecutions
        for (r in rerun) if (r) total--
        return total
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

/** The envelope up to its `createdAt` value. */
private const val ENVELOPE_HEAD = "{\"scope\":\"$RUN_SCOPE\",\"schemaVersion\":$FORMAT_VERSION,\"createdAt\":\""

/** Appends [text] as a JSON string literal (RFC 8259 escaping); text without a character to escape is copied whole. */
internal fun StringBuilder.appendJson(text: String): StringBuilder {
    append('"')
    var plain = 0
    while (plain < text.length) {
        val c = text[plain]
        if (c == '"' || c == '\\' || c < ' ') break
        plain++
    }
    if (plain == text.length) return append(text).append('"') // a bulk copy; a range would go char by char
    append(text, 0, plain)
    for (i in plain until text.length) {
        val c = text[i]
        when {
            c == '"' -> append("\\\"")
            c == '\\' -> append("\\\\")
            c == '\n' -> append("\\n")
            c == '\r' -> append("\\r")
            c == '\t' -> append("\\t")
            c < ' ' -> append("\\u").append(HEX[c.code shr 12 and 15]).append(HEX[c.code shr 8 and 15])
                .append(HEX[c.code shr 4 and 15]).append(HEX[c.code and 15])
            else -> append(c)
        }
    }
    return append('"')
}

private const val HEX = "0123456789abcdef"
