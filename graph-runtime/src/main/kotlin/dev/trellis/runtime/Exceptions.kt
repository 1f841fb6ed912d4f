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

/** A run exceeded one of its limits; [limit] names it and [value] is its configured value. */
public class LimitExceededException(
    /** The name of the limit, e.g. `maxNodeExecutions`. */
    public val limit: String,
    /** The configured value of the limit. */
    public val value: Any,
    detail: String,
) : IllegalStateException(
        "Limit $limit = $value exceeded: $detail Raise $limit in the graph's config { } (from Java: " +
            "JavaGraph.Builder.$limit(...)) if this is expected.",
    )

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
