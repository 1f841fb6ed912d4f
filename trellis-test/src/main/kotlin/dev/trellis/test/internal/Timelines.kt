package dev.trellis.test.internal

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.studio.timeline.RunTimeline
import java.time.Instant

// The kit's one use of the run timeline (its HTML page and the node executions a checkpoint history shows): when the
// timeline moves to another module, only this file changes.

/** The timeline page of a run from its [events] (and [result], when it ended). */
internal fun timelineHtml(graph: Graph, result: RunResult?, events: List<RunEvent>): String =
    (if (result != null) RunTimeline.of(graph, result, events) else RunTimeline.of(graph, events)).toHtml()

/** The node executions a checkpoint [history] shows, as (node, start) in no particular order. */
internal fun checkpointExecutions(graph: Graph, history: List<CheckpointRecord>): List<Pair<String, Instant>> =
    RunTimeline.fromCheckpoints(graph, history).bars.map { it.nodeId to it.start }

/** The node executions of run [runId] in [store], in the order they started. */
internal suspend fun storedNodes(graph: Graph, store: CheckpointStore, runId: String): List<String> {
    val history = store.history(runId)
    require(history.isNotEmpty()) {
        "The store has no checkpoint of run '$runId'; check the run id (store.runs() lists the runs it has)."
    }
    return checkpointExecutions(graph, history).sortedBy { it.second }.map { it.first }
}
