package dev.trellis.runtime

import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.graph.State
import java.time.Duration

/**
 * What a run did: its final [status] and [state], a [NodeResult] per node, the [executions] in start order,
 * and its total [duration].
 */
public class RunResult internal constructor(
    /** The run's id. */
    public val runId: String,
    /** The graph's id. */
    public val graphId: String,
    /** How the run ended: COMPLETED, FAILED, CANCELLED (or INTERRUPTED with persistence). */
    public val status: Status,
    /** The final state: every merged write of every completed execution. */
    public val state: State,
    private val details: RunDetails,
    /** How long the run took. */
    public val duration: Duration,
    /** Every failure, in the order they happened; empty unless the run failed. */
    public val errors: List<Throwable>,
    /** The pending interrupts of an INTERRUPTED run, in the order they happened; empty otherwise. */
    public val interrupts: List<Interrupt> = emptyList(),
    /**
     * The results of the last child run of each subgraph node and map task that ran, by path (`research`,
     * `research[3]`), each with its own [children], keyed by their paths in the whole run (`research/web[0]`)
     * (`docs/semantics.md` §11).
     */
    public val children: Map<String, RunResult> = emptyMap(),
    /**
     * The totals of the run's meters by name, in the order they were first charged, over the run's whole history (a
     * resumed or forked run's include those before); empty when nothing was charged (`docs/semantics.md` §13.4).
     */
    public val meters: Map<String, Double> = emptyMap(),
    /**
     * The compensations a failed run ran (`docs/semantics.md` §13.6), in the order they ran (reverse completion
     * order), each with its outcome; empty when the run did not fail or nothing had a compensation.
     */
    public val compensations: List<CompensationResult> = emptyList(),
    /**
     * Why an `INTERRUPTED` run stopped when it was not asked to: its checkpoint store stayed unreachable
     * ([ResumableRunException], `docs/persistence.md` "Faults"); the run can be resumed once the store answers. Null
     * for every other run.
     */
    public val stoppedBy: CheckpointStoreUnavailableException? = null,
) {
    /** The result of the last child run at [path] (`research`, `research[3]`, or deeper: `research/web[0]`). */
    public fun child(path: String): RunResult {
        children[path]?.let { return it }
        // A child run's children are keyed by their paths in the whole run (`research/web[0]`), like its events.
        var slash = path.indexOf('/')
        while (slash > 0) {
            children[path.substring(0, slash)]?.let { return it.child(path) }
            slash = path.indexOf('/', slash + 1)
        }
        throw NoSuchElementException(
            "Run '$runId' has no child run at '$path'. Child runs: ${children.keys.ifEmpty { "none" }}.",
        )
    }

    /**
     * How many executions were left out of [executions] by the history limit. Read from the run's details, not kept
     * in a field of its own: a result is made per run (and per child run), and one more field made it 8 bytes larger.
     */
    public val droppedExecutions: Long get() = details.droppedExecutions

    @Volatile
    private var nodesMade: Map<String, NodeResult>? = null

    @Volatile
    private var executionsMade: List<NodeExecution>? = null

    /** A result per node, in declaration order, by node id. */
    public val nodes: Map<String, NodeResult>
        get() = nodesMade ?: details.nodes().also { nodesMade = it } // a race makes equal maps

    /** Every execution, in the order they started (the most recent [RunOptions.executionHistoryLimit]). */
    public val executions: List<NodeExecution>
        get() = executionsMade ?: details.executions().also { executionsMade = it } // a race makes equal lists

    /** The first failure, or null. */
    public val error: Throwable? get() = errors.firstOrNull()

    /** The result of node [nodeId]. @throws NoSuchElementException naming the known nodes. */
    public fun node(nodeId: String): NodeResult =
        nodes[nodeId] ?: throw NoSuchElementException("Graph '$graphId' has no node '$nodeId'. Nodes: ${nodes.keys}.")

    override fun toString(): String = "RunResult($runId, $status, duration=$duration, state=$state, error=$error)"
}

/**
 * The outcome of one node over a run: the [status] of its last execution, how many [executions] and
 * [attempts] it had, the time it spent, and its last [error].
 */
public class NodeResult internal constructor(
    /** The node's id. */
    public val nodeId: String,
    /** The status of the last execution, PENDING if it never started. */
    public val status: Status,
    /** How many executions started. */
    public val executions: Int,
    /** How many attempts were made over all executions. */
    public val attempts: Int,
    /** The total time spent in executions, retries included. */
    public val duration: Duration,
    /** The last failure, or null. */
    public val error: Throwable?,
) {
    override fun toString(): String =
        "NodeResult($nodeId, $status, executions=$executions, attempts=$attempts, duration=$duration, error=$error)"
}

/** One execution of a node: which one, how it ended, how many attempts and how long it took. */
public class NodeExecution internal constructor(
    /** The node's id. */
    public val nodeId: String,
    /** The execution number of this node, from 1. */
    public val execution: Int,
    /** How it ended. */
    public val status: Status,
    /** How many attempts it made. */
    public val attempts: Int,
    /** How long it took, retries included. */
    public val duration: Duration,
    /** Its failure, or null. */
    public val error: Throwable?,
) {
    override fun toString(): String =
        "NodeExecution($nodeId#$execution, $status, attempts=$attempts, duration=$duration)"
}

/**
 * A node's request for input: [payload] is what it asked; resume the run with an answer for [path] (the node id for
 * a node of the run's own graph, `research/approve` inside subgraph node `research`, `docs/semantics.md` §11).
 */
public class Interrupt internal constructor(
    /** The node that asked (its id in its own graph). */
    public val nodeId: String,
    /** What it asked. */
    public val payload: String,
    /** Where the node is: the key of its answer. */
    public val path: String = nodeId,
) {
    override fun equals(other: Any?): Boolean = other is Interrupt && other.path == path && other.payload == payload

    override fun hashCode(): Int = 31 * path.hashCode() + payload.hashCode()

    override fun toString(): String = "Interrupt($path: $payload)"
}

/** Where a [RunResult] reads its per-node results and executions from, when first asked: the run's recorder. */
internal interface RunDetails {
    /** How many executions the history limit left out ([RunResult.droppedExecutions]). */
    val droppedExecutions: Long

    /** A result per node, in declaration order, by node id. */
    fun nodes(): Map<String, NodeResult>

    /** The kept executions, in the order they started. */
    fun executions(): List<NodeExecution>
}
