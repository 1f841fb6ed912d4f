package dev.trellis.runtime.internal

import dev.trellis.graph.Topology
import dev.trellis.runtime.Interrupt
import dev.trellis.runtime.NodeExecution
import dev.trellis.runtime.NodeResult
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import java.time.Duration

/**
 * What a run's [RunResult] is made of, recorded by the driver as executions begin and end: the last execution
 * and status of each node, its attempts and time, the kept history (at most [historyLimit] executions, the older
 * ones counted as dropped), the run's errors and the executions that interrupted it.
 */
internal class RunRecorder(private val topology: Topology, private val historyLimit: Int) {
    private val size = topology.size
    private val lastExecution = arrayOfNulls<Execution>(size)
    private val attempts = IntArray(size)
    private val nanos = LongArray(size)

    // Sized for one execution per node (a chain's), so that a run of a few nodes never regrows it.
    private val history = ArrayDeque<Execution>(minOf(historyLimit, size))
    private var dropped = 0L

    /** The status of each node's last execution (what a checkpoint saves), PENDING for nodes that never ran. */
    val nodeStatus = Array(size) { Status.PENDING }

    /** Why the run failed, in order. */
    val errors = ArrayList<Throwable>(0)

    /** The executions that asked for input, in order. */
    val interrupts = ArrayList<Execution>(0)

    fun begun(execution: Execution) {
        lastExecution[execution.index] = execution
        if (historyLimit > 0) {
            if (history.size == historyLimit) {
                history.removeFirst()
                dropped++
            }
            history.addLast(execution)
        } else {
            dropped++
        }
    }

    /** Adds the attempts and time of an execution that ended. */
    fun measure(execution: Execution) {
        val index = execution.index
        attempts[index] += execution.attempt
        nanos[index] += execution.durationNanos
    }

    /** The result of the run, ended with [status] in [state] after [counts] executions per node, from [startNanos] to [endNanos]. */
    fun result(
        runId: String,
        graphId: String,
        status: Status,
        state: dev.trellis.graph.State,
        counts: IntArray,
        startNanos: Long,
        endNanos: Long,
        children: Map<String, RunResult> = emptyMap(),
        meters: Map<String, Double> = emptyMap(),
        compensations: List<dev.trellis.runtime.CompensationResult> = emptyList(),
    ): RunResult {
        // Read when asked for: nothing changes a run's recorder, nor its counts, once the run ended.
        return RunResult(
            runId,
            graphId,
            status,
            state,
            { nodeResults(counts) },
            {
                history.map {
                    NodeExecution(
                        it.node.id,
                        it.number,
                        it.status,
                        it.attempt,
                        Duration.ofNanos(it.durationNanos),
                        it.error,
                    )
                }
            },
            dropped,
            Duration.ofNanos(endNanos - startNanos),
            errors.toList(),
            if (interrupts.isEmpty()) {
                emptyList()
            } else {
                interrupts.flatMap {
                    it.nestedInterrupts
                        ?: listOf(Interrupt(it.node.id, it.interruptPayload ?: "", it.path))
                }
            },
            // A view, not a copy: nothing adds a child result once the run ended (its child runs ended before it).
            if (children.isEmpty()) emptyMap() else java.util.Collections.unmodifiableMap(children),
            meters,
            compensations,
        )
    }

    private fun nodeResults(counts: IntArray): Map<String, NodeResult> {
        // The last failure of each node among the kept executions, in one pass (not one scan per node).
        val historyErrors = arrayOfNulls<Throwable>(size)
        for (execution in history) execution.error?.let { historyErrors[execution.index] = it }
        val nodes = LinkedHashMap<String, NodeResult>()
        for (i in 0 until size) {
            val id = topology.nodes[i].id
            nodes[id] =
                NodeResult(
                    id,
                    lastExecution[i]?.status ?: nodeStatus[i],
                    counts[i],
                    attempts[i],
                    Duration.ofNanos(nanos[i]),
                    lastExecution[i]?.error ?: historyErrors[i],
                )
        }
        return nodes
    }
}
