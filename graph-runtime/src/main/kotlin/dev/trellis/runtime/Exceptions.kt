package dev.trellis.runtime

import java.time.Duration

/**
 * Thrown by `invoke` when a run fails; [result] holds everything the run did and [cause] is the first
 * failure (a node's own exception, unwrapped).
 */
public class GraphRunException(
    /** The failed run's result. */
    public val result: RunResult,
) : RuntimeException("Run ${result.runId} of graph '${result.graphId}' failed: ${result.error?.message}", result.error)

/**
 * Two executions wrote the same key without a reducer, and the later one never saw the earlier one's
 * write: applying it would silently lose an update.
 */
public class ConflictingUpdateException(
    /** The key written by both. */
    public val key: String,
    /** The node whose write was rejected. */
    public val nodeId: String,
    /** The node that wrote the key after [nodeId] took its snapshot. */
    public val otherNodeId: String,
) : IllegalStateException(
        "Conflicting writes to state key '$key': node '$nodeId' started before node '$otherNodeId' wrote it, so " +
            "applying '$nodeId''s write would silently lose '$otherNodeId''s update. Give key '$key' a reducer " +
            "(e.g. Reducer.append() or Reducer.replace()) or add an edge that orders '$otherNodeId' and '$nodeId'.",
    )

/**
 * A run exceeded one of its limits: the graph's `maxNodeExecutions`, or a limit of its [Budget] (`docs/semantics.md`
 * §7, §13.4). [limit] names it (`maxNodeExecutions`, `maxWallTime`, or the meter's name), [value] is its configured
 * value, [total] what the run reached, and [nodeId] the node that crossed it.
 */
public class LimitExceededException private constructor(
    /** The name of the limit: `maxNodeExecutions`, `maxWallTime`, or the name of a meter. */
    public val limit: String,
    /** The configured value of the limit (an `Int`, a `java.time.Duration`, or a meter's `Double`). */
    public val value: Any,
    /** The meter, when the limit is a meter's; null for `maxNodeExecutions` and `maxWallTime`. */
    public val meter: String?,
    /**
     * What the run reached: the meter's total (a `Double`), the time spent (a `java.time.Duration`), or the number of
     * the execution that would have started; null when not known.
     */
    public val total: Any?,
    /**
     * The node that crossed the limit: whose execution's end made a total exceed, or that would have started; null
     * when the run was already over its budget when it started (a resume or fork).
     */
    public val nodeId: String?,
    message: String,
) : IllegalStateException(message) {
    /** A limit of the graph's config: [limit] = [value], exceeded as [detail] says. */
    public constructor(limit: String, value: Any, detail: String) : this(
        limit,
        value,
        null,
        null,
        null,
        "Limit $limit = $value exceeded: $detail Raise $limit in the graph's config { } (from Java: " +
            "JavaGraph.Builder.$limit(...)) if this is expected.",
    )

    internal companion object {
        private const val RAISE = "Raise it in the run's Budget (RunOptions(budget = …); from Java " +
            "JavaRunOptions.Builder.budget(…)) if this is expected; fork the run from its last checkpoint to go on."

        /** The graph's or the budget's `maxNodeExecutions`, [fromBudget] telling which, hit before [node] started. */
        fun executions(value: Int, fromBudget: Boolean, node: String, number: Int): LimitExceededException {
            val detail = "node '$node' would start execution number $number of this run."
            return LimitExceededException(
                "maxNodeExecutions",
                value,
                null,
                number,
                node,
                if (fromBudget) {
                    "Limit maxNodeExecutions = $value of the run's budget exceeded: $detail $RAISE"
                } else {
                    "Limit maxNodeExecutions = $value exceeded: $detail Raise maxNodeExecutions in the " +
                        "graph's config { } (from Java: JavaGraph.Builder.maxNodeExecutions(...)) if this is expected."
                },
            )
        }

        /** The budget's `maxWallTime` = [value] spent ([spent]) when [node] ended or would have started. */
        fun wallTime(
            value: java.time.Duration,
            spent: java.time.Duration,
            node: String?,
            starting: Boolean,
        ): LimitExceededException {
            val what = when {
                node == null -> "the run had spent $spent when it started."
                starting -> "the run had spent $spent when node '$node' would have started."
                else -> "the run had spent $spent when node '$node' ended."
            }
            return LimitExceededException(
                "maxWallTime",
                value,
                null,
                spent,
                node,
                "Limit maxWallTime = $value of the run's budget exceeded: $what $RAISE",
            )
        }

        /** Meter [meter] went above its limit [value] at [total] when [node]'s execution ended. */
        fun meter(meter: String, value: Double, total: Double, node: String?): LimitExceededException {
            val what = if (node == null) {
                "its total was already $total when the run started."
            } else {
                "node '$node' brought its total to $total."
            }
            return LimitExceededException(
                meter,
                value,
                meter,
                total,
                node,
                "Budget of meter '$meter' = $value exceeded: $what $RAISE",
            )
        }
    }
}

/** A run did not finish within its `executionTimeout`. */
public class RunTimeoutException(
    /** The configured timeout. */
    public val timeout: Duration,
) : IllegalStateException(
        "The run did not finish within executionTimeout = $timeout; running nodes were cancelled. " +
            "Raise executionTimeout in the graph's config { } (from Java: " +
            "JavaGraph.Builder.executionTimeout(...)) or " +
            "make the nodes faster.",
    )

/** One attempt of a node ran longer than its timeout. */
public class NodeTimeoutException(
    /** The node that timed out. */
    public val nodeId: String,
    /** The node's timeout. */
    public val timeout: Duration,
) : IllegalStateException(
        "Node '$nodeId' did not finish within its timeout of $timeout. Raise the node's timeout, or give it a retry policy.",
    )
