package dev.trellis.runtime.internal.events

import dev.trellis.graph.Topology
import dev.trellis.runtime.Interrupt
import dev.trellis.runtime.NodeExecution
import dev.trellis.runtime.NodeResult
import dev.trellis.runtime.RunDetails
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.policies.meters
import java.time.Duration

/**
 * What a run's [RunResult] is made of, recorded by the driver as executions begin and end: the kept history (at most
 * [historyLimit] executions, the older ones counted as dropped), from which each node's last execution, attempts
 * and time are read when the result is asked for; the run's errors and the executions that interrupted it.
 *
 * A run that keeps every execution (most runs: fewer than [historyLimit]) needs nothing per node beside its history.
 * Once executions are dropped, what they add up to per node is kept in [Dropped] instead.
 */
internal class RunRecorder(private val topology: Topology, private val historyLimit: Int) : RunDetails {
    private val size = topology.size

    // Sized for one execution per node (a chain's), so that a run of a few nodes never regrows it.
    private val history = ArrayDeque<Execution>(minOf(historyLimit, size))
    private var dropped = 0L

    /** Nothing is dropped once the run ended, when its result reads this. */
    override val droppedExecutions: Long get() = dropped

    /** What the executions no longer in [history] add up to, per node; null until one is dropped. */
    private var droppedTotals: Dropped? = null

    private var statuses: Array<Status>? = null

    /**
     * The status of each node's last execution (what a checkpoint saves), PENDING for nodes that never ran: kept by
     * a run that saves checkpoints or was restored from one (made when first read or written).
     */
    val nodeStatus: Array<Status> get() = statuses ?: Array(size) { Status.PENDING }.also { statuses = it }

    /** Why the run failed, in order. */
    val errors = ArrayList<Throwable>(0)

    /** The executions that asked for input, in order. */
    val interrupts = ArrayList<Execution>(0)

    /** Records a begun execution; [running] is the position's running execution of each node. */
    fun begun(execution: Execution, running: Array<Execution?>) {
        if (historyLimit > 0) {
            if (history.size == historyLimit) {
                val old = history.removeFirst()
                drop(old, stillRunning = running[old.index] === old)
            }
            history.addLast(execution)
        } else {
            drop(execution, stillRunning = true)
        }
    }

    private fun drop(execution: Execution, stillRunning: Boolean) {
        dropped++
        val totals = droppedTotals ?: Dropped(size).also { droppedTotals = it }
        totals.last[execution.index] = execution
        if (stillRunning) totals.unmeasured += execution else totals.add(execution)
    }

    /** Notes the end of an execution: a dropped one's attempts and time are added to its node's totals now. */
    fun measure(execution: Execution) {
        val totals = droppedTotals ?: return
        if (totals.unmeasured.remove(execution)) totals.add(execution)
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
        stoppedBy: dev.trellis.checkpoint.CheckpointStoreUnavailableException? = null,
    ): RunResult {
        // Read when asked for ([RunDetails]): nothing changes a run's recorder, nor its counts, once the run ended.
        this.counts = counts
        return RunResult(
            runId,
            graphId,
            status,
            state,
            this,
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
            stoppedBy,
        )
    }

    /** The run's execution counts per node, given with its [result]. */
    private lateinit var counts: IntArray

    override fun executions(): List<NodeExecution> = history.map {
        NodeExecution(it.node.id, it.number, it.status, it.attempt, Duration.ofNanos(it.durationNanos), it.error)
    }

    override fun nodes(): Map<String, NodeResult> {
        // Each node's last execution, attempts, time and last failure, in one pass over the history (not one scan
        // per node), on top of what the dropped executions added up to.
        val totals = droppedTotals
        val last = totals?.last?.copyOf() ?: arrayOfNulls(size)
        val attempts = totals?.attempts?.copyOf() ?: IntArray(size)
        val nanos = totals?.nanos?.copyOf() ?: LongArray(size)
        val historyErrors = arrayOfNulls<Throwable>(size)
        for (execution in history) {
            val i = execution.index
            last[i] = execution
            attempts[i] += execution.attempt
            nanos[i] += execution.durationNanos
            execution.error?.let { historyErrors[i] = it }
        }
        val statuses = statuses
        val nodes = LinkedHashMap<String, NodeResult>()
        for (i in 0 until size) {
            val id = topology.nodes[i].id
            nodes[id] =
                NodeResult(
                    id,
                    last[i]?.status ?: statuses?.get(i) ?: Status.PENDING,
                    counts[i],
                    attempts[i],
                    Duration.ofNanos(nanos[i]),
                    last[i]?.error ?: historyErrors[i],
                )
        }
        return nodes
    }

    /** What the executions dropped from the history add up to, per node (their last, attempts and time). */
    private class Dropped(size: Int) {
        val last = arrayOfNulls<Execution>(size)
        val attempts = IntArray(size)
        val nanos = LongArray(size)

        /** Dropped while still running: added when they end ([measure]). */
        val unmeasured = ArrayList<Execution>()

        fun add(execution: Execution) {
            attempts[execution.index] += execution.attempt
            nanos[execution.index] += execution.durationNanos
        }
    }
}
