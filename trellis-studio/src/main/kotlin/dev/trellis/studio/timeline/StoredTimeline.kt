package dev.trellis.studio.timeline

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.graph.Graph
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.Status
import dev.trellis.studio.internal.CheckpointPayload
import dev.trellis.studio.internal.StateFold
import dev.trellis.studio.timeline.TimelineMark.Kind
import java.time.Instant

/**
 * Builds a [RunTimeline] from a run's checkpoint history. A checkpoint records, per node, how many executions
 * started and the status of the last one, so an execution is known only to have run between the checkpoint before
 * it and the one that first counts it: its bar spans that interval. The child runs and map tasks a checkpoint holds
 * (their own checkpoint chains) give their executions the same way, in lanes of their own. The budget's meter
 * totals and the compensations' outcomes are marked at the checkpoint that first records them. Attempts, retries,
 * custom events and the exact times are not stored.
 */
internal object StoredTimeline {
    private class Span(
        val nodeId: String,
        val path: String,
        val execution: Int,
        val start: Instant,
        val end: Instant,
        val status: Status,
    )

    /** What is known so far of one run or child: its counts and when its last checkpoint was taken. */
    private class Progress(var previous: Instant) {
        val counts = HashMap<String, Int>()
        val statuses = HashMap<String, Status>()
    }

    fun build(graph: Graph, history: List<CheckpointRecord>): RunTimeline {
        require(history.isNotEmpty()) { "A timeline needs at least one checkpoint of the run; the history is empty." }
        val runId = history.first().runId
        require(
            history.all { it.runId == runId },
        ) { "The checkpoints belong to several runs; pass the history of one run." }
        val decoded = history.map { record ->
            CheckpointPayload.of(record)
                ?: throw CheckpointFormatException("Checkpoint ${record.sequence} of run '$runId' is not JSON.")
        }
        val spans = ArrayList<Span>()
        val marks = ArrayList<TimelineMark>()
        val run = Progress(history.first().createdAt)
        val children = HashMap<String, Progress>()
        val pendingInterrupts = HashSet<String>()
        var meters = emptyMap<String, String>()
        val compensations = HashMap<Pair<String, Int>, String>()
        for ((record, payload) in history.zip(decoded)) {
            val counted = spans.size
            count(payload.nodes, "", run, record.createdAt, spans)
            if (payload.meters.isNotEmpty() && payload.meters != meters) {
                // The totals grew: charged by the executions this checkpoint records (the last of them, when several).
                val by = spans.subList(counted, spans.size).lastOrNull()
                marks += TimelineMark(
                    Kind.BUDGET,
                    record.createdAt,
                    by?.nodeId,
                    by?.execution ?: 0,
                    "totals ${text(payload.meters)}" + (if (meters.isEmpty()) "" else " (were ${text(meters)})"),
                    by?.path,
                )
                meters = payload.meters
            }
            for (c in payload.compensations) {
                if (compensations.put(c.path to c.execution, c.status) == c.status) continue
                val nodeId = c.path.substringAfterLast('/')
                val (kind, label) = when (c.status) {
                    "STARTED" -> Kind.COMPENSATION to "compensating"
                    "COMPLETED" -> Kind.COMPENSATION to "compensated"
                    "FAILED" -> Kind.FAILURE to "compensation failed: ${c.error}"
                    else -> Kind.COMPENSATION to "compensation ${c.status.lowercase()}"
                }
                marks += TimelineMark(kind, record.createdAt, nodeId, c.execution, label, c.path)
            }
            for ((key, chain) in payload.children) {
                val prefix = childPath(key)
                val progress = children.getOrPut(prefix) { Progress(run.previous) }
                for (child in chain) {
                    val at = child.createdAt ?: record.createdAt
                    count(child.nodes, "$prefix/", progress, at, spans)
                    progress.previous = at
                }
            }
            // An interrupted execution is not counted (it runs again on resume, under the same number): it shows
            // only in the checkpoint's interrupts, as long as the run waits for its answer.
            for (interrupt in payload.interrupts) {
                val path = interrupt.path ?: interrupt.node
                if (!pendingInterrupts.add(path)) continue
                val nodeId = path.substringAfterLast('/')
                val execution = (run.counts[path] ?: 0) + 1
                spans += Span(nodeId, path, execution, run.previous, record.createdAt, Status.INTERRUPTED)
                marks += TimelineMark(Kind.INTERRUPT, record.createdAt, nodeId, execution, interrupt.payload, path)
            }
            pendingInterrupts.retainAll(payload.interrupts.map { it.path ?: it.node }.toSet())
            marks += TimelineMark(
                Kind.CHECKPOINT,
                record.createdAt,
                null,
                0,
                "checkpoint ${record.sequence} (${record.kind.name.lowercase()}, ${record.status})",
                null,
            )
            run.previous = record.createdAt
        }
        coverChildren(graph, spans)
        val rows = spans.map { it.path.substringBeforeLast('/', "") }
        val lanes = assignLanes(rows, spans.map { it.start }, spans.map { it.end })
        val bars = spans.mapIndexed { i, s ->
            TimelineBar(s.nodeId, s.path, s.execution, s.start, s.end, s.status, 0, lanes[i], null)
        }
        for (bar in bars) {
            if (bar.status == Status.FAILED) {
                marks += TimelineMark(Kind.FAILURE, bar.end, bar.nodeId, bar.execution, "failed", bar.path)
            }
        }
        val nodes = graph.nodes.map {
            TimelineNode(it.id, run.statuses[it.id] ?: Status.PENDING, run.counts[it.id] ?: 0, 0)
        }
        val fullAt = history.indexOfLast { it.kind == CheckpointRecord.Kind.FULL }
        if (fullAt < 0) {
            throw CheckpointFormatException(
                "The history of run '$runId' holds no full checkpoint (pruned?); its state cannot be restored.",
            )
        }
        val state = StateFold.fold(graph, decoded.subList(fullAt, decoded.size))
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
            history.last().createdAt,
            bars,
            marks.sortedBy { it.at },
            nodes,
            state.mapValues { (_, v) -> fold(v.toString()) },
            statusMermaid(graph, nodes),
            approximate = true,
            errors = decoded.last { !it.childrenOnly }.errors,
            graph = graph,
        )
    }

    private fun count(
        nodes: Map<String, CheckpointPayload.NodeCount>,
        prefix: String,
        progress: Progress,
        at: Instant,
        spans: MutableList<Span>,
    ) {
        for ((nodeId, node) in nodes) {
            val path = prefix + nodeId
            val key = if (prefix.isEmpty()) nodeId else path
            val before = progress.counts[key] ?: 0
            val status = runCatching { Status.valueOf(node.status) }.getOrDefault(Status.COMPLETED)
            for (n in before + 1..node.count) {
                spans += Span(nodeId, path, n, progress.previous, at, if (n == node.count) status else Status.COMPLETED)
            }
            if (node.count > before) progress.counts[key] = node.count
            progress.statuses[key] = status
        }
    }

    /**
     * A map or subgraph node's execution began before its children's: its span starts no later than the first child
     * execution counted since its previous execution ended (the checkpoint that counts it comes after them all).
     */
    private fun coverChildren(graph: Graph, spans: MutableList<Span>) {
        for (node in graph.nodes) {
            if (node.subgraph == null) continue
            var since: Instant? = null
            for ((i, s) in spans.withIndex()) {
                if (s.path != node.id) continue
                val first = spans.filter {
                    (it.path.startsWith(node.id + "[") || it.path.startsWith(node.id + "/")) &&
                        it.start < s.end && (since == null || it.start >= since)
                }.minOfOrNull { it.start }
                if (first != null &&
                    first < s.start
                ) {
                    spans[i] = Span(s.nodeId, s.path, s.execution, first, s.end, s.status)
                }
                since = s.end
            }
        }
    }

    private fun text(meters: Map<String, String>) = meters.entries.joinToString { "${it.key} ${it.value}" }

    /** The path prefix of a child key: `research#1[3]` is task 3 of `research` (`research[3]`), `review#2` a child run. */
    internal fun childPath(key: String): String {
        val hash = key.indexOf('#')
        if (hash < 0) return key
        val node = key.substring(0, hash)
        val task = key.indexOf('[', hash).takeIf { it >= 0 }?.let { key.substring(it) }.orEmpty()
        return node + task
    }
}
