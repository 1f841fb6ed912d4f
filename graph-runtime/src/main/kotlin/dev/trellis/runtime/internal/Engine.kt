package dev.trellis.runtime.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.Topology
import dev.trellis.runtime.ConflictingUpdateException
import dev.trellis.runtime.LimitExceededException
import dev.trellis.runtime.NodeExecution
import dev.trellis.runtime.NodeResult
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.RunTimeoutException
import dev.trellis.runtime.Status
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.ClosedSendChannelException
import kotlinx.coroutines.channels.SendChannel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import java.time.Duration
import java.time.Instant
import kotlin.time.TimeSource
import kotlin.time.toJavaDuration

/**
 * The scheduler of one run. A single coroutine (the loop) owns all scheduler state; nodes run as child
 * coroutines and hand their finished [Execution] back through [completions]. When exactly one node is
 * ready and nothing else runs, the loop runs it inline, without a dispatch.
 *
 * Rules: `docs/semantics.md`.
 */
internal class Engine(
    val graph: Graph,
    input: State,
    val options: RunOptions,
    private val events: SendChannel<RunEvent>?,
) {
    val runId: String = options.runId ?: RunIds.next()
    private val topology: Topology = graph.topology
    private val size = topology.size
    private val config = graph.config
    private val position = Position(size, input)
    private val completions = Channel<Execution>(Channel.UNLIMITED)
    private val childContext = options.dispatcher ?: Dispatchers.Default
    private val monotonic = options.timeSource === TimeSource.Monotonic
    private val origin = options.timeSource.markNow()
    private val lastExecution = arrayOfNulls<Execution>(size)
    private val attempts = IntArray(size)
    private val nanos = LongArray(size)
    private val errors = ArrayList<Throwable>(0)
    private val history = ArrayDeque<Execution>()
    private var dropped = 0L
    private var startNanos = 0L

    @Volatile
    var currentState: State = input
        private set

    fun nanoTime(): Long = if (monotonic) System.nanoTime() else origin.elapsedNow().inWholeNanoseconds

    /** Runs to the end and returns the result; a cancelled caller gets its [CancellationException] rethrown. */
    suspend fun execute(onCancelled: (RunResult) -> Unit = {}): RunResult {
        startNanos = nanoTime()
        send { RunEvent.RunStarted(runId, now(), graph.id, currentState) }
        for (entry in topology.entries) position.markReady(entry)
        val timeout = config.executionTimeout
        try {
            if (timeout == null) {
                loop()
            } else if (withTimeoutOrNull(timeout) { loop(); true } == null) {
                fail(RunTimeoutException(timeout.toJavaDuration()))
                drainCancelled()
            }
        } catch (e: CancellationException) {
            withContext(NonCancellable) {
                draining = true
                drainCancelled()
                val result = result(Status.CANCELLED)
                onCancelled(result)
                send { RunEvent.RunCancelled(runId, now(), result) }
            }
            throw e
        }
        val result = result(if (errors.isEmpty()) Status.COMPLETED else Status.FAILED)
        send {
            if (result.status == Status.COMPLETED) {
                RunEvent.RunCompleted(runId, now(), result)
            } else {
                RunEvent.RunFailed(runId, now(), result.errors.first(), result)
            }
        }
        return result
    }

    /**
     * After the loop's scope ended abnormally (its children are done): reports the executions that were
     * still running, which all ended cancelled or finished just before.
     */
    private suspend fun drainCancelled() {
        position.failed = true
        while (true) complete(completions.tryReceive().getOrNull() ?: break)
        for (execution in position.running) {
            if (execution == null) continue
            if (execution.status == Status.EXECUTING) execution.status = Status.CANCELLED
            complete(execution)
        }
    }

    private suspend fun loop() = coroutineScope {
        while (true) {
            startReady(this)
            if (position.runningCount == 0) {
                if (!position.failed && position.fallback()) continue
                break
            }
            complete(completions.receive())
        }
    }

    private suspend fun startReady(scope: CoroutineScope) {
        while (!position.failed && position.readyCount > 0 && position.runningCount < config.maxConcurrency) {
            // A cancelled run starts nothing more, even when a node swallowed the cancellation.
            currentCoroutineContext().ensureActive()
            val index = position.pollReady()
            if (position.totalExecutions >= config.maxNodeExecutions) {
                fail(
                    LimitExceededException(
                        "maxNodeExecutions",
                        config.maxNodeExecutions,
                        "node '${topology.nodes[index].id}' would start execution number ${position.totalExecutions + 1} of this run.",
                    ),
                )
                position.drop(index)
                return
            }
            val execution = begin(index)
            if (position.runningCount == 1 && position.readyCount == 0) {
                execution.runAttempts()
                complete(execution)
            } else {
                execution.job = scope.launch(childContext, CoroutineStart.ATOMIC) {
                    try {
                        execution.runAttempts()
                    } finally {
                        completions.trySend(execution)
                    }
                }
            }
        }
    }

    private suspend fun begin(index: Int): Execution {
        val number = position.begin(index)
        val execution = Execution(this, topology.nodes[index], index, number, currentState)
        lastExecution[index] = execution
        position.running[index] = execution
        if (options.executionHistoryLimit > 0) {
            if (history.size == options.executionHistoryLimit) {
                history.removeFirst()
                dropped++
            }
            history.addLast(execution)
        } else {
            dropped++
        }
        send { RunEvent.NodeStarted(runId, now(), execution.node.id, number) }
        return execution
    }

    private suspend fun complete(execution: Execution) {
        val index = execution.index
        position.finish(index)
        attempts[index] += execution.attempt
        nanos[index] += execution.durationNanos
        when (execution.status) {
            Status.COMPLETED -> completed(execution)
            Status.FAILED -> failed(execution)
            else -> send { RunEvent.NodeCancelled(runId, now(), execution.node.id, execution.number) }
        }
        execution.release()
        if (!position.failed) position.promote(topology)
    }

    private suspend fun completed(execution: Execution) {
        val conflict = merge(execution)
        if (conflict != null) {
            execution.status = Status.FAILED
            execution.error = conflict
            failed(execution)
            return
        }
        if (position.failed) {
            sendCompleted(execution)
            return
        }
        val taken = try {
            decideEdges(execution)
        } catch (e: Throwable) {
            if (e is VirtualMachineError && e !is StackOverflowError) throw e
            execution.status = Status.FAILED
            execution.error = e
            failed(execution)
            return
        }
        sendCompleted(execution)
        if (taken == null) return
        for (i in 0 until taken.size) {
            val target = taken[i]
            if (events != null) {
                val to = if (target < 0) Graph.END else topology.nodes[target].id
                send { RunEvent.EdgeTaken(runId, now(), execution.node.id, to) }
            }
            if (target >= 0) position.trigger(target)
        }
    }

    private suspend fun sendCompleted(execution: Execution) = send {
        RunEvent.NodeCompleted(
            runId,
            now(),
            execution.node.id,
            execution.number,
            execution.attempt,
            Duration.ofNanos(execution.durationNanos),
        )
    }

    private suspend fun failed(execution: Execution) {
        val error = execution.error!!
        send {
            RunEvent.NodeFailed(runId, now(), execution.node.id, execution.number, execution.attempt, error, Duration.ofNanos(execution.durationNanos))
        }
        fail(error)
    }

    /** Marks the run failed: nothing starts any more; with fail-fast, running nodes are cancelled. */
    private fun fail(error: Throwable) {
        errors += error
        if (position.failed) return
        position.failed = true
        if (config.failFast) cancelRunning()
    }

    private fun cancelRunning() {
        for (execution in position.running) execution?.job?.cancel()
    }

    /** Applies the execution's writes atomically; returns the conflict instead of applying anything. */
    private fun merge(execution: Execution): ConflictingUpdateException? {
        val count = execution.writeCount
        if (count == 0) return null
        val snapshot = execution.state
        val current = currentState
        val keys = topology.keys
        for (i in 0 until count) {
            val k = execution.writeKeyAt(i)
            if (keys[k].reducer == null && current.versionAt(k) != snapshot.versionAt(k)) {
                return ConflictingUpdateException(keys[k].name, execution.node.id, position.lastWriter[k] ?: "?")
            }
        }
        val values = current.copyValues()
        val versions = current.copyVersions()
        for (i in 0 until count) {
            val k = execution.writeKeyAt(i)
            val update = execution.writeValueAt(i)
            @Suppress("UNCHECKED_CAST")
            val reducer = keys[k].reducer as dev.trellis.graph.Reducer<Any?>?
            val old = values[k]
            values[k] = if (reducer == null || old === State.Unset) update else reducer.reduce(old, update)
            versions[k] = ++position.version
            position.lastWriter[k] = execution.node.id
        }
        currentState = State.fromArrays(graph.schema, values, versions)
        return null
    }

    /** The targets of the edges taken after [execution] (END is -1), in declaration order; null when none. */
    private fun decideEdges(execution: Execution): IntArray? {
        val edges = topology.outgoing[execution.index]
        if (edges.isEmpty()) return null
        val state = currentState
        if (edges.size == 1) {
            val target = edges[0].decide(state, execution.node.id)
            return if (target == NOT_TAKEN) null else singletons[target + 1] ?: intArrayOf(target)
        }
        var taken = IntArray(edges.size)
        var count = 0
        for (edge in edges) {
            val target = edge.decide(state, execution.node.id)
            if (target != NOT_TAKEN) taken[count++] = target
        }
        if (count != taken.size) taken = taken.copyOf(count)
        return taken
    }

    private val singletons: Array<IntArray?> = Array(minOf(size, 1024) + 1) { intArrayOf(it - 1) }

    suspend fun emitCustom(execution: Execution, payload: Any) {
        send { RunEvent.Custom(runId, now(), execution.node.id, execution.number, payload) }
    }

    suspend fun emitRetrying(execution: Execution, error: Throwable, delay: Duration) {
        send { RunEvent.NodeRetrying(runId, now(), execution.node.id, execution.number, execution.attempt, error, delay) }
    }

    /**
     * Set while reporting a cancelled run (in [NonCancellable]): events still wait for a slow reader, so none
     * is dropped; a reader that stopped reading cancels the channel, and the events are then discarded.
     */
    private var draining = false

    private suspend inline fun send(event: () -> RunEvent) {
        val channel = events ?: return
        if (!draining) {
            channel.send(event())
            return
        }
        try {
            channel.send(event())
        } catch (_: ClosedSendChannelException) {
            // The reader is gone.
        } catch (_: CancellationException) {
            // The reader cancelled the channel; the run's own cancellation is rethrown by execute().
        }
    }

    private fun now(): Instant = Instant.now(options.clock)

    private fun result(status: Status): RunResult {
        val nodes = LinkedHashMap<String, NodeResult>()
        for (i in 0 until size) {
            val node = topology.nodes[i]
            val last = lastExecution[i]
            nodes[node.id] = NodeResult(
                node.id,
                last?.status ?: Status.PENDING,
                position.counts[i],
                attempts[i],
                Duration.ofNanos(nanos[i]),
                errorOf(i),
            )
        }
        val executions = history.map { NodeExecution(it.node.id, it.number, it.status, it.attempt, Duration.ofNanos(it.durationNanos), it.error) }
        return RunResult(
            runId,
            graph.id,
            status,
            currentState,
            nodes,
            executions,
            dropped,
            Duration.ofNanos(nanoTime() - startNanos),
            errors.toList(),
        )
    }

    private fun errorOf(index: Int): Throwable? = lastExecution[index]?.error ?: history.lastOrNull { it.index == index && it.error != null }?.error
}
