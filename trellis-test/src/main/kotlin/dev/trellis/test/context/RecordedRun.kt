package dev.trellis.test.context

import dev.trellis.graph.Graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult

/** A run a [TrellisTestContext] saw: its graph, its events and (once it ended) its result. */
public class RecordedRun internal constructor(
    /** The graph that ran. */
    public val graph: Graph,
    /** The run's events, in order. */
    public val events: List<RunEvent>,
) {
    /** The run's result, or null when it did not end (its terminal event is missing). */
    public val result: RunResult? get() = events.filterIsInstance<RunEvent.Terminal>().lastOrNull()?.result

    override fun toString(): String = "RecordedRun(${graph.id}, ${events.size} events, ${result?.status})"
}
