package dev.trellis.studio.timeline

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration
import java.time.Instant

/**
 * What a run did, laid out in time: the [bars] of its node executions in parallel lanes, the [marks] on them
 * (retries, failures, interrupts, checkpoints, custom events), each node's status and count, and the final state.
 * Write it as a self-contained HTML page with [toHtml] or [writeHtml] (no network access needed to open it).
 *
 * Built from the events of a run ([of]) or, after the fact, from a run's checkpoint history in any store
 * ([fromStore], [fromCheckpoints]) — then with less detail, see [approximate].
 *
 * ```kotlin
 * val events = graph.events(input).toList()
 * RunTimeline.of(graph, events).writeHtml(Path.of("run.html"))
 * ```
 */
public class RunTimeline internal constructor(
    /** The graph's id. */
    public val graphId: String,
    /** The run's id. */
    public val runId: String,
    /** How the run ended (EXECUTING when the events or checkpoints stop before its end). */
    public val status: Status,
    /** When the run started. */
    public val startedAt: Instant,
    /** When the run ended, or when the last thing known about it happened. */
    public val endedAt: Instant,
    /** Every execution, in start order, with its lane. */
    public val bars: List<TimelineBar>,
    /** What happened at one instant: retries, failures, interrupts, checkpoints, custom events. */
    public val marks: List<TimelineMark>,
    /** Each node of the graph, in declaration order: its last status, executions and attempts. */
    public val nodes: List<TimelineNode>,
    /** The final state, key by key, as text (in schema order; unset keys left out). */
    public val finalState: Map<String, String>,
    /** The graph's Mermaid drawing with statuses ([toMermaid]). */
    public val mermaid: String,
    /**
     * Whether times are known only between checkpoints (a timeline from a store): a bar then spans from the
     * checkpoint before an execution to the one after it, and attempts, retries and custom events are unknown.
     */
    public val approximate: Boolean,
    /** The run's errors, as text. */
    public val errors: List<String>,
    internal val graph: Graph,
) {
    /**
     * How many lanes the bars need: the run's own executions first (as many lanes as overlapped in time), then each
     * child run and map task in lanes of its own ([TimelineBar.row]).
     */
    public val laneCount: Int get() = (bars.maxOfOrNull { it.lane } ?: -1) + 1

    /** The label of each lane, from lane 0: `run` for the run's own executions, else the child's path (`research[2]`). */
    public val laneLabels: List<String>
        get() = List(laneCount) { lane -> bars.firstOrNull { it.lane == lane }?.row?.ifEmpty { "run" } ?: "run" }

    /** How long the run took (or has taken so far). */
    public val duration: Duration get() = Duration.between(startedAt, endedAt)

    /** The page: one self-contained HTML document with inline CSS and SVG, no script and no external resource. */
    public fun toHtml(): String = TimelineHtml.render(this)

    /** Writes [toHtml] to [path] (UTF-8) and returns the path. */
    public fun writeHtml(path: Path): Path = Files.writeString(path, toHtml())

    override fun toString(): String =
        "RunTimeline($graphId, run=$runId, $status, ${bars.size} executions in $laneCount lanes, ${marks.size} marks)"

    /** Factories. */
    public companion object {
        /**
         * The timeline of a run from its events, in delivery order (as `Graph.events` streams them; the terminal
         * event, which holds the [RunResult], should be among them).
         */
        @JvmStatic
        public fun of(graph: Graph, events: List<RunEvent>): RunTimeline = EventTimeline.build(graph, null, events)

        /** The timeline of a run from its [result] and the events collected while it ran. */
        @JvmStatic
        public fun of(graph: Graph, result: RunResult, events: List<RunEvent>): RunTimeline =
            EventTimeline.build(graph, result, events)

        /**
         * The timeline of run [runId] from its checkpoint history in [store] ([approximate]; see
         * `docs/observability.md` for what a history cannot tell).
         */
        public suspend fun fromStore(graph: Graph, store: CheckpointStore, runId: String): RunTimeline {
            val history = store.history(runId)
            require(history.isNotEmpty()) {
                "The store has no checkpoint of run '$runId'; check the run id (store.runs() lists the runs it has)."
            }
            return fromCheckpoints(graph, history)
        }

        /** Like [fromStore], from the run's checkpoint records (oldest first), as `CheckpointStore.history` lists them. */
        @JvmStatic
        public fun fromCheckpoints(graph: Graph, history: List<CheckpointRecord>): RunTimeline =
            StoredTimeline.build(graph, history)
    }
}

/** One execution of a node on the timeline. */
public class TimelineBar internal constructor(
    /** The node (in a child run or map task: the node of the child graph). */
    public val nodeId: String,
    /** Where it ran: the node id in the run itself, `research[2]/search` in task 2 of map node `research`. */
    public val path: String,
    /** Its execution number, from 1. */
    public val execution: Int,
    /** When it started (from a store: the checkpoint before it). */
    public val start: Instant,
    /** When it ended (from a store: the checkpoint after it); the timeline's end while still running. */
    public val end: Instant,
    /** How it ended: COMPLETED, FAILED, CANCELLED, INTERRUPTED, or EXECUTING when no end is known. */
    public val status: Status,
    /** How many attempts it made; 0 when unknown. */
    public val attempts: Int,
    /** Its lane, from 0: executions that overlap in time have different lanes, and each child run its own lanes. */
    public val lane: Int,
    /** Its failure as text, or null. */
    public val error: String?,
) {
    /** The child run or map task it ran in (`research[2]`), empty for the run's own executions. */
    public val row: String get() = path.substringBeforeLast('/', "")

    override fun toString(): String = "TimelineBar($path#$execution, $status, lane=$lane)"
}

/** Something that happened at one instant, on an execution ([nodeId] set) or on the run. */
public class TimelineMark internal constructor(
    /** What it is. */
    public val kind: Kind,
    /** When. */
    public val at: Instant,
    /** The node it belongs to, or null for the run (checkpoints). */
    public val nodeId: String?,
    /** The execution it belongs to, or 0 for the run. */
    public val execution: Int,
    /** A short description. */
    public val label: String,
    /** The path of the execution it belongs to (`research[2]/search`), or null for the run. */
    public val path: String? = nodeId,
) {
    /** The kinds of marks. */
    public enum class Kind {
        /** An attempt failed and another follows. */
        RETRY,

        /** An execution failed. */
        FAILURE,

        /** A node asked for input. */
        INTERRUPT,

        /** A checkpoint was saved. */
        CHECKPOINT,

        /** A node emitted a payload. */
        CUSTOM,

        /** A node charged meters against the run's budget. */
        BUDGET,

        /** A compensation ran (or failed) for a completed execution. */
        COMPENSATION,
    }

    override fun toString(): String = "TimelineMark($kind, ${nodeId ?: "run"}, $label)"
}

/** A node of the graph over the run: its last status, its executions and attempts (0 when unknown). */
public class TimelineNode internal constructor(
    /** The node. */
    public val nodeId: String,
    /** The status of its last execution, PENDING if it never started. */
    public val status: Status,
    /** How many executions started. */
    public val executions: Int,
    /** How many attempts they made; 0 when unknown (a timeline from a store). */
    public val attempts: Int,
) {
    override fun toString(): String = "TimelineNode($nodeId, $status, executions=$executions)"
}

/**
 * Assigns lanes by row: each row (the run's own executions, each child run and map task) gets lanes of its own, in
 * the order rows first start, and within a row each interval (start order) the lowest lane free at its start.
 */
internal fun assignLanes(rows: List<String>, starts: List<Instant>, ends: List<Instant>): IntArray {
    val lanes = IntArray(starts.size)
    val order = rows.indices.groupBy { rows[it] }.entries.sortedWith(
        compareBy<Map.Entry<String, List<Int>>>({ it.key.isNotEmpty() }, { starts[it.value.first()] }),
    )
    var offset = 0
    for ((_, members) in order) {
        val inner = assignLanes(members.map { starts[it] }, members.map { ends[it] })
        members.forEachIndexed { i, index -> lanes[index] = offset + inner[i] }
        offset += (inner.maxOrNull() ?: -1) + 1
    }
    return lanes
}

/** Assigns each interval (start order) the lowest lane free at its start. */
internal fun assignLanes(starts: List<Instant>, ends: List<Instant>): IntArray {
    val laneEnds = ArrayList<Instant>()
    val lanes = IntArray(starts.size)
    for (i in starts.indices) {
        var lane = laneEnds.indexOfFirst { !it.isAfter(starts[i]) }
        if (lane < 0) {
            lane = laneEnds.size
            laneEnds += ends[i]
        } else {
            laneEnds[lane] = ends[i]
        }
        lanes[i] = lane
    }
    return lanes
}

/**
 * For each composite node of the run's graph, what its child runs or map tasks did, from their bars:
 * `4 tasks · search ×4, summarize ×4`.
 */
internal fun RunTimeline.childSummary(): Map<String, String> {
    val out = LinkedHashMap<String, String>()
    for (node in graph.nodes) {
        if (node.subgraph == null) continue
        // The executions inside its children (`research[2]/search`, `check/search`), not a task's own bar
        // (`research[2]`, which the events of a run have).
        val inside = bars.filter {
            (it.path.startsWith(node.id + "[") || it.path.startsWith(node.id + "/")) && '/' in it.path
        }
        if (inside.isEmpty()) continue
        val tasks = inside.map { it.path.substringBefore('/') }.distinct()
        val counts = inside.groupingBy { it.nodeId }.eachCount().entries.joinToString(", ") { "${it.key} ×${it.value}" }
        out[node.id] = if (node.isMap) "${tasks.size} tasks · $counts" else counts
    }
    return out
}
