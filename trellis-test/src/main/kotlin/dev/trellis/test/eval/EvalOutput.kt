package dev.trellis.test.eval

import dev.trellis.graph.Graph
import dev.trellis.runtime.RunEvent

/**
 * What a graph produced for one [EvalCase]: its answer as [text], optionally the run's [events] and [graph] (for
 * the trajectory scorer and the report's timeline) and what the case [cost] (tokens, money: the unit of the
 * evaluation's budget).
 */
public class EvalOutput @JvmOverloads constructor(
    /** The answer the scorers read. */
    public val text: String,
    /** The run's events, when the trajectory matters. */
    public val events: List<RunEvent> = emptyList(),
    /** The graph that ran, for the report's timeline page. */
    public val graph: Graph? = null,
    /** What the case cost, in the budget's unit. */
    public val cost: Double = 0.0,
) {
    override fun toString(): String = "EvalOutput(${text.take(60)}, ${events.size} events, cost=$cost)"
}
