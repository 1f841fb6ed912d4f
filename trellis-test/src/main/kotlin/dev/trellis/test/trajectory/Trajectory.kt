package dev.trellis.test.trajectory

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.agent.AgentEvent
import dev.trellis.runtime.stateAt
import dev.trellis.test.internal.checkpointExecutions
import dev.trellis.test.internal.storedNodes
import kotlinx.coroutines.runBlocking
import org.opentest4j.AssertionFailedError

/**
 * What a finished run did: its node executions and tool calls in order, its final state and (when its
 * checkpoints are at hand) the state after each node execution, with assertions that fail with readable diffs.
 *
 * Make one from the run's collected events ([of]), or from its checkpoints ([fromStore]); both ([of] with a
 * store) add the state after each node to the events' node and tool calls.
 *
 * ```kotlin
 * Trajectory.of(events)
 *     .assertNodes("plan", "search", "write", "review", "write", "review", "publish")
 *     .assertToolCallsInAnyOrder("web", "papers")
 *     .assertNodeCount("write", 2)
 *     .assertFinalState(Research.drafts, 2)
 * ```
 */
public class Trajectory private constructor(
    /** The node executions in the order they started (a subgraph's nodes as `parent/child`; map tasks left out). */
    public val nodes: List<String>,
    private val tools: List<Pair<String, String>>?,
    private val result: RunResult?,
    private val states: Map<String, State>?,
) {
    /** The tool calls in the order they started: the tools' names. */
    public val toolCalls: List<String> get() = requireTools().map { it.first }

    /** The tool calls as `name(arguments)`, in the order they started. */
    public val toolCallsWithArguments: List<String> get() = requireTools().map { "${it.first}(${it.second})" }

    /** The run's result, when the trajectory has the run's terminal event. */
    public val runResult: RunResult
        get() = result ?: throw IllegalStateException(
            "This trajectory has no run result: it was made from checkpoints or from events without the run's " +
                "terminal event. Collect every event of the run.",
        )

    /** The state at the end of the run. */
    public val finalState: State get() = runResult.state

    /** The state right after execution [execution] (from 1) of [node]. Needs the run's checkpoints. */
    @JvmOverloads
    public fun stateAfter(node: String, execution: Int = 1): State {
        val known = states ?: throw IllegalStateException(
            "The state after a node needs the run's checkpoints: make the trajectory with Trajectory.fromStore, or " +
                "Trajectory.of(events, graph, store) for a run that saved checkpoints to that store.",
        )
        return known["$node#$execution"] ?: throw AssertionFailedError(
            "Node '$node' has no execution $execution in this run; its executions: ${count(node)}; nodes run: " +
                "$nodes.",
        )
    }

    /** Asserts the node executions are exactly [expected], in this order. */
    public fun assertNodes(vararg expected: String): Trajectory = apply {
        if (nodes != expected.toList()) listMismatch("Node executions", "exactly, in order", expected.toList(), nodes)
    }

    /** Asserts [expected] ran in this order, other executions allowed before, between and after them. */
    public fun assertNodesInOrder(vararg expected: String): Trajectory = apply {
        if (!isSubsequence(expected.toList(), nodes)) {
            listMismatch("Node executions", "in this order, others allowed between", expected.toList(), nodes)
        }
    }

    /** Asserts the node executions are [expected] in any order (the same executions, as many times each). */
    public fun assertNodesInAnyOrder(vararg expected: String): Trajectory = apply {
        if (nodes.sorted() != expected.sorted()) {
            listMismatch("Node executions", "in any order", expected.sorted(), nodes.sorted())
        }
    }

    /** Asserts [node] was executed [count] times. */
    public fun assertNodeCount(node: String, count: Int): Trajectory = apply {
        val actual = count(node)
        if (actual != count) {
            throw AssertionFailedError(
                "Node '$node' ran $actual time(s), expected $count. Nodes run: $nodes",
                count,
                actual,
            )
        }
    }

    /** Asserts the tool calls are exactly [expected] (tool names), in this order. */
    public fun assertToolCalls(vararg expected: String): Trajectory = apply {
        if (toolCalls !=
            expected.toList()
        ) {
            listMismatch("Tool calls", "exactly, in order", expected.toList(), toolCalls)
        }
    }

    /** Asserts the tools [expected] were called in this order, other calls allowed between. */
    public fun assertToolCallsInOrder(vararg expected: String): Trajectory = apply {
        if (!isSubsequence(expected.toList(), toolCalls)) {
            listMismatch("Tool calls", "in this order, others allowed between", expected.toList(), toolCalls)
        }
    }

    /** Asserts the tool calls are [expected] in any order. */
    public fun assertToolCallsInAnyOrder(vararg expected: String): Trajectory = apply {
        if (toolCalls.sorted() != expected.sorted()) {
            listMismatch("Tool calls", "in any order", expected.sorted(), toolCalls.sorted())
        }
    }

    /** Asserts tool [name] was called [count] times. */
    public fun assertToolCallCount(name: String, count: Int): Trajectory = apply {
        val actual = toolCalls.count { it == name }
        if (actual != count) {
            throw AssertionFailedError(
                "Tool '$name' was called $actual time(s), expected $count. Tool calls: $toolCallsWithArguments",
                count,
                actual,
            )
        }
    }

    /** Asserts the final state's [key] is [expected]. */
    public fun <T> assertFinalState(key: StateKey<T>, expected: T): Trajectory = apply {
        val actual = finalState.getOrNull(key)
        if (actual != expected) {
            throw AssertionFailedError("Final state '${key.name}' is $actual, expected $expected.", expected, actual)
        }
    }

    /** Asserts [key] was [expected] right after the first execution of [node]. Needs the run's checkpoints. */
    public fun <T> assertStateAfter(node: String, key: StateKey<T>, expected: T): Trajectory =
        assertStateAfter(node, 1, key, expected)

    /** Asserts [key] was [expected] right after execution [execution] of [node]. Needs the run's checkpoints. */
    public fun <T> assertStateAfter(node: String, execution: Int, key: StateKey<T>, expected: T): Trajectory = apply {
        val actual = stateAfter(node, execution).getOrNull(key)
        if (actual != expected) {
            throw AssertionFailedError(
                "State '${key.name}' after execution $execution of node '$node' is $actual, expected $expected.",
                expected,
                actual,
            )
        }
    }

    private fun count(node: String) = nodes.count { it == node }

    private fun requireTools(): List<Pair<String, String>> = tools ?: throw IllegalStateException(
        "A trajectory made from checkpoints has no tool calls (checkpoints do not record them); make it from the " +
            "run's events with Trajectory.of(events).",
    )

    override fun toString(): String = "Trajectory(nodes=$nodes, toolCalls=${tools?.map { it.first }})"

    /** Makes trajectories. */
    public companion object {
        /** The trajectory of a run from its events, as collected from `Graph.run` or `Graph.events`. */
        @JvmStatic
        public fun of(events: List<RunEvent>): Trajectory =
            Trajectory(nodesOf(events), toolsOf(events), resultOf(events), null)

        /**
         * The trajectory of a run from its [events] and its checkpoints in [store] (the run saved them there): the
         * state after each node execution is read from the checkpoint saved after it.
         */
        public suspend fun of(events: List<RunEvent>, graph: Graph, store: CheckpointStore): Trajectory {
            val runId = events.firstOrNull()?.runId
                ?: throw IllegalArgumentException("No events: collect the run's events first.")
            return Trajectory(nodesOf(events), toolsOf(events), resultOf(events), statesOf(graph, store, runId))
        }

        /** [of] with a store, blocking: for Java. */
        @JvmStatic
        public fun ofBlocking(events: List<RunEvent>, graph: Graph, store: CheckpointStore): Trajectory =
            runBlocking { of(events, graph, store) }

        /** The trajectory of run [runId] from its checkpoints in [store] (no tool calls: use events for those). */
        public suspend fun fromStore(graph: Graph, store: CheckpointStore, runId: String): Trajectory {
            return Trajectory(storedNodes(graph, store, runId), null, null, statesOf(graph, store, runId))
        }

        /** [fromStore], blocking: for Java. */
        @JvmStatic
        public fun fromStoreBlocking(graph: Graph, store: CheckpointStore, runId: String): Trajectory =
            runBlocking { fromStore(graph, store, runId) }

        private fun nodesOf(events: List<RunEvent>): List<String> =
            events.filterIsInstance<RunEvent.NodeStarted>().filter { it.task < 0 }.map { it.path }

        private fun toolsOf(events: List<RunEvent>): List<Pair<String, String>> =
            events.filterIsInstance<RunEvent.Custom>().filter { it.task >= 0 }.mapNotNull { event ->
                val step = event.payload as? AgentEvent.Step ?: return@mapNotNull null
                val text = step.description
                val open = text.indexOf('(')
                if (open < 0) text to "" else text.substring(0, open) to text.substring(open + 1).removeSuffix(")")
            }

        private fun resultOf(events: List<RunEvent>): RunResult? =
            events.filterIsInstance<RunEvent.Terminal>().lastOrNull()?.result

        /** The state after each node execution (`node#n`): the checkpoint in which its execution count grew. */
        private suspend fun statesOf(graph: Graph, store: CheckpointStore, runId: String): Map<String, State> {
            val history = store.history(runId).filter { it.graphId == graph.id }
            val states = LinkedHashMap<String, State>()
            val seen = HashMap<String, Int>()
            for (i in history.indices) {
                val counts = checkpointExecutions(graph, history.subList(0, i + 1)).groupingBy { it.first }.eachCount()
                var state: State? = null
                for ((node, count) in counts) {
                    val before = seen[node] ?: 0
                    for (n in before + 1..count) {
                        state = state ?: graph.stateAt(store, runId, history[i].sequence)
                        states["$node#$n"] = state
                    }
                    seen[node] = count
                }
            }
            return states
        }
    }
}
