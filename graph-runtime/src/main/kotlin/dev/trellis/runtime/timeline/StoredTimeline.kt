package dev.trellis.runtime.timeline

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.graph.Graph
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.PositionCodec
import dev.trellis.runtime.timeline.TimelineMark.Kind
import dev.trellis.runtime.toMermaid
import java.time.Instant

/**
 * Builds a [RunTimeline] from a run's checkpoint history. A checkpoint records, per node, how many executions
 * started and the status of the last one, so an execution is known only to have run between the checkpoint before
 * it and the one that first counts it: its bar spans that interval. Attempts, retries, custom events and the exact
 * times are not stored.
 */
internal object StoredTimeline {
    private class Span(val nodeId: String, val execution: Int, val start: Instant, val end: Instant, val status: Status)

    fun build(graph: Graph, history: List<CheckpointRecord>): RunTimeline {
        require(history.isNotEmpty()) { "A timeline needs at least one checkpoint of the run; the history is empty." }
        val runId = history.first().runId
        require(
            history.all { it.runId == runId },
        ) { "The checkpoints belong to several runs; pass the history of one run." }
        val counts = HashMap<String, Int>()
        val statuses = HashMap<String, Status>()
        val spans = ArrayList<Span>()
        val marks = ArrayList<TimelineMark>()
        val decoded = history.map { record ->
            record to PositionCodec.unwrap(graph, record.payload, "checkpoint ${record.sequence} of run '$runId'")
        }
        val pendingInterrupts = HashSet<String>()
        var previous = history.first().createdAt
        for ((record, pair) in decoded) {
            val data = pair.second
            for ((nodeId, node) in data.nodes) {
                val before = counts[nodeId] ?: 0
                val status = Status.valueOf(node.status)
                for (n in before + 1..node.count) {
                    spans +=
                        Span(nodeId, n, previous, record.createdAt, if (n == node.count) status else Status.COMPLETED)
                }
                counts[nodeId] = node.count
                statuses[nodeId] = status
            }
            // An interrupted execution is not counted (it runs again on resume, under the same number): it shows
            // only in the checkpoint's interrupts, as long as the run waits for its answer.
            for (interrupt in data.interrupts) {
                if (!pendingInterrupts.add(interrupt.node)) continue
                val execution = (counts[interrupt.node] ?: 0) + 1
                spans += Span(interrupt.node, execution, previous, record.createdAt, Status.INTERRUPTED)
                marks += TimelineMark(Kind.INTERRUPT, record.createdAt, interrupt.node, execution, interrupt.payload)
            }
            pendingInterrupts.retainAll(data.interrupts.map { it.node }.toSet())
            marks += TimelineMark(
                Kind.CHECKPOINT,
                record.createdAt,
                null,
                0,
                "checkpoint ${record.sequence} (${record.kind.name.lowercase()}, ${record.status})",
            )
            previous = record.createdAt
        }
        val last = decoded.last().second.second
        val end = history.last().createdAt
        val lanes = assignLanes(spans.map { it.start }, spans.map { it.end })
        val bars = spans.mapIndexed {
            i,
            s,
            ->
            TimelineBar(s.nodeId, s.execution, s.start, s.end, s.status, 0, lanes[i], null)
        }
        for (bar in bars) {
            if (bar.status ==
                Status.FAILED
            ) {
                marks += TimelineMark(Kind.FAILURE, bar.end, bar.nodeId, bar.execution, "failed")
            }
        }
        val nodes = graph.nodes.map { TimelineNode(it.id, statuses[it.id] ?: Status.PENDING, counts[it.id] ?: 0, 0) }
        val fullAt = decoded.indexOfLast { it.first.kind == CheckpointRecord.Kind.FULL }
        if (fullAt < 0) {
            throw CheckpointFormatException(
                "The history of run '$runId' holds no full checkpoint (pruned?); its state cannot be restored.",
            )
        }
        val restored = PositionCodec.restore(
            graph,
            decoded.subList(fullAt, decoded.size).map { it.second },
            emptyList(),
            "checkpoint ${history.last().sequence} of run '$runId'",
        )
        val status = when (history.last().status) {
            "RUNNING" -> Status.EXECUTING
            "DRAINED" -> Status.INTERRUPTED
            else -> runCatching { Status.valueOf(history.last().status) }.getOrDefault(Status.EXECUTING)
        }
        return RunTimeline(
            graph.id,
            runId,
            status,
            history.first().createdAt,
            end,
            bars,
            marks.sortedBy { it.at },
            nodes,
            describe(restored.state),
            graph.toMermaid(nodes),
            approximate = true,
            errors = last.errors,
            graph = graph,
        )
    }
}
