package dev.trellis.runtime.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.Topology
import dev.trellis.checkpoint.CheckpointRef
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.ConflictingUpdateException
import dev.trellis.runtime.Interrupt
import dev.trellis.runtime.persistence.InterruptData
import dev.trellis.runtime.persistence.NodeData
import dev.trellis.runtime.persistence.PositionCodec
import dev.trellis.runtime.persistence.PositionData
import dev.trellis.runtime.persistence.Restored
import dev.trellis.runtime.persistence.TriggerData
import dev.trellis.runtime.persistence.WriteData
import dev.trellis.runtime.LimitExceededException
import dev.trellis.runtime.NodeExecution
import dev.trellis.runtime.NodeResult
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.RunTimeoutException
import dev.trellis.runtime.Status
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.channels.ClosedSendChannelException
import kotlinx.coroutines.channels.SendChannel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import java.time.Clock
import java.time.Duration
import java.time.Instant
import kotlin.coroutines.ContinuationInterceptor
import kotlin.time.TimeMark
import kotlin.time.TimeSource
import kotlin.time.toJavaDuration

/**
 * The scheduler of one run. Its state is single-writer: only the holder of the drive right ([Handoff]) touches
 * it — the run's loop at first, then whichever node coroutine finishes while nobody drives, so a completion is
 * processed on the thread that produced it instead of waking the loop. When exactly one node is ready and
 * nothing else runs, the driver runs it inline, without a dispatch.
 *
 * Rules: `docs/semantics.md`.
 */
/** A node whose start kept its worker busy for less than this (ns) is started by the worker that polls it. */
private const val QUICK_START_NANOS = 10_000L

internal class Engine(
    val graph: Graph,
    input: State,
    val options: RunOptions,
    private val events: SendChannel<RunEvent>?,
    private val restored: Restored? = null,
    answers: Map<String, String> = emptyMap(),
    private val forkedFrom: CheckpointRef? = null,
    /** The sequence of the last checkpoint of this run in the store (0 for a new run or a fork). */
    lastSequence: Long = 0,
    /** Whether this is a new run id (a new run or a fork), which must not have checkpoints yet. */
    private val fresh: Boolean = restored == null,
) {
    val runId: String = options.runId ?: RunIds.next()
    private val topology: Topology = graph.topology
    private val size = topology.size
    private val config = graph.config
    private val position = Position(size, input, topology.channels)

    /** Where node bodies run, resolved when the run starts ([resolveTime]). */
    var childContext: CoroutineDispatcher = Dispatchers.Default
        private set
    private var monotonic = true
    private lateinit var origin: TimeMark
    private var clock: Clock = options.clock

    /**
     * Whether the run is in virtual time: its nodes run on a test dispatcher, or its time source is not the monotonic
     * one. Then no scheduling decision reads the wall clock (no start costs, no stall monitor): the order of
     * same-instant completions depends on nothing but the graph (`docs/semantics.md` §10). Set when the run starts.
     */
    var virtualTime: Boolean = false
        private set
    private val lastExecution = arrayOfNulls<Execution>(size)
    private val attempts = IntArray(size)
    private val nanos = LongArray(size)
    private val errors = ArrayList<Throwable>(0)
    private val history = ArrayDeque<Execution>()
    private var dropped = 0L
    private var startNanos = 0L
    private val nodeStatus = Array(size) { Status.PENDING }
    private val answers = arrayOfNulls<String>(size)
    private val interrupts = ArrayList<Execution>(0)

    @Volatile
    private var drainRequested = false
    private var drained = false
    private val checkpointer: Checkpointer? = options.checkpointing
        ?.takeIf { it.mode != Checkpointing.Mode.OFF }
        ?.let { Checkpointer(graph, runId, it, options.clock, lastSequence, forkedFrom) }

    /** Reads back the first value written to each key, when the run saves checkpoints. */
    private val readBack: ReadBack? = if (checkpointer != null) ReadBack(topology.keys) else null

    init {
        for ((nodeId, answer) in answers) {
            val index = topology.indexOf(nodeId)
            require(index >= 0) { "Cannot answer node '$nodeId': graph '${graph.id}' has no such node." }
            this.answers[index] = answer
        }
        if (restored != null) restore(restored)
    }

    private fun restore(restored: Restored) {
        val data = restored.data
        val counts = IntArray(size)
        for ((id, node) in data.nodes) {
            val index = topology.indexOf(id)
            counts[index] = node.count
            nodeStatus[index] = Status.valueOf(node.status)
        }
        data.lastWriters.forEach { (key, node) -> graph.schema.keyOrNull(key)?.let { position.lastWriter[it.index] = node } }
        position.restore(
            counts,
            data.totalExecutions,
            data.version,
            data.triggers.sortedBy { it.stamp }.map { tokensOf(it) },
            data.ready.map { topology.indexOf(it) },
        )
    }

    /**
     * The (node, channel, count) of a stored trigger. One stored without its source (the first format), or from an
     * edge the graph no longer has, goes to the node's first input channel.
     */
    private fun tokensOf(trigger: TriggerData): Triple<Int, Int, Int> {
        val node = topology.indexOf(trigger.node)
        val channels = topology.channels
        val from = trigger.from?.let { topology.indexOf(it) } ?: -1
        val channel = if (from >= 0) channels.of(from, node) else -1
        if (channel >= 0) return Triple(node, channel, trigger.tokens)
        if (channels.start[node] == channels.start[node + 1]) {
            throw CheckpointFormatException(
                "The checkpoint holds a trigger of node '${trigger.node}', which no edge of graph '${graph.id}' leads to any more; " +
                    "resume the run with the graph version that wrote it, or fork from an earlier checkpoint.",
            )
        }
        return Triple(node, channels.start[node], trigger.tokens)
    }

    fun takeAnswer(index: Int): String? {
        val answer = answers[index] ?: return null
        answers[index] = null
        return answer
    }

    @Volatile
    var currentState: State = restored?.state ?: input
        private set

    fun nanoTime(): Long = if (monotonic) System.nanoTime() else origin.elapsedNow().inWholeNanoseconds

    /**
     * Resolves where nodes run and which time the run reads, from [RunOptions] and the [caller]'s dispatcher: under a
     * kotlinx-coroutines-test scheduler (`runTest`), options left at their defaults take the caller's test dispatcher,
     * its virtual time and a clock of that virtual time (`docs/testing.md`).
     */
    private fun resolveTime(caller: ContinuationInterceptor?) {
        val test = TestSchedulers.testDispatcher(options.dispatcher ?: caller)
        childContext = options.dispatcher ?: test ?: Dispatchers.Default
        val timeSource = if (test != null && options.timeSource === TimeSource.Monotonic) TestSchedulers.timeSource(test) else options.timeSource
        if (test != null && options.clock == Clock.systemUTC()) clock = TestSchedulers.clock(test)
        monotonic = timeSource === TimeSource.Monotonic
        origin = timeSource.markNow()
        virtualTime = test != null || !monotonic
    }

    /** Runs to the end and returns the result; a cancelled caller gets its [CancellationException] rethrown. */
    suspend fun execute(onCancelled: (RunResult) -> Unit = {}): RunResult {
        resolveTime(currentCoroutineContext()[ContinuationInterceptor])
        startNanos = nanoTime()
        // A new run's state (its input, a fork's edit) is checked before anything is claimed or run.
        if (fresh) readBack?.requireReadable(currentState)
        checkpointer?.open(fresh)
        val unregister = options.control?.register { drainRequested = true }
        try {
            return run(onCancelled)
        } finally {
            releaseLease()
            // Only now may the control count the run as ended: a shutdown hook waiting for it lets the JVM exit.
            unregister?.invoke()
        }
    }

    /**
     * Releases the run's lease (once; later calls do nothing), before the run's end is observable — its terminal
     * event, its result, the control's count — so that whoever sees the run end can claim it at once.
     */
    private suspend fun releaseLease() {
        if (checkpointer != null) withContext(NonCancellable) { checkpointer.close() }
    }

    private suspend fun run(onCancelled: (RunResult) -> Unit): RunResult {
        send { RunEvent.RunStarted(runId, now(), graph.id, currentState) }
        if (restored == null) for (entry in topology.entries) position.markReady(entry)
        if (fresh && checkpointer?.everyStep == true) checkpointStep()
        val timeout = config.executionTimeout
        val status: Status
        try {
            if (timeout == null) {
                loop()
            } else if (withTimeoutOrNull(timeout) { loop(); true } == null) {
                fail(RunTimeoutException(timeout.toJavaDuration()))
                drainCancelled()
            }
            status = when {
                errors.isNotEmpty() -> Status.FAILED
                interrupts.isNotEmpty() || (drained && position.readyCount + position.pendingTriggers > 0) -> Status.INTERRUPTED
                else -> Status.COMPLETED
            }
            // Inside the try: a run cancelled while its last checkpoint is saved ends CANCELLED like any other.
            if (checkpointer != null && !fencedOut) checkpointFinal(status)
        } catch (e: CancellationException) {
            withContext(NonCancellable) {
                draining = true
                drainCancelled()
                releaseLease()
                val result = result(Status.CANCELLED)
                onCancelled(result)
                send { RunEvent.RunCancelled(runId, now(), result) }
            }
            throw e
        }
        releaseLease()
        val result = result(if (errors.isEmpty()) status else Status.FAILED)
        send {
            when (result.status) {
                Status.COMPLETED -> RunEvent.RunCompleted(runId, now(), result)
                Status.INTERRUPTED -> RunEvent.RunInterrupted(runId, now(), result)
                else -> RunEvent.RunFailed(runId, now(), result.errors.first(), result)
            }
        }
        return result
    }

    private var fencedOut = false

    /** Saves the full checkpoint of the run's end; a failure to save fails the run, a cancellation is rethrown. */
    private suspend fun checkpointFinal(status: Status) {
        val label = if (status == Status.INTERRUPTED && interrupts.isEmpty()) "DRAINED" else status.name
        try {
            checkpoint(label, full = true)
        } catch (e: Throwable) {
            e.rethrowIfFatal(currentCoroutineContext())
            errors += e
        }
    }

    /** Saves a checkpoint of the current position; a failure to save fails the run. */
    private suspend fun checkpoint(status: String, full: Boolean = false) {
        val writer = checkpointer ?: return
        val sequence = try {
            writer.save(status, full) { isFull, createdAt ->
                if (isFull) {
                    PositionCodec.wrap(PositionEncoder.full(graph, runId, status, currentState, position, nodeStatus, interrupts, errors), createdAt)
                } else {
                    PositionEncoder.delta(graph, runId, status, writer, currentState, position, nodeStatus, interrupts, errors, createdAt)
                }
            }
        } catch (e: FencedOutException) {
            fencedOut = true
            throw e
        }
        post { RunEvent.CheckpointSaved(runId, now(), sequence, writer.lastWasFull) }
    }

    private suspend fun checkpointStep() {
        try {
            checkpoint("RUNNING")
        } catch (e: Throwable) {
            e.rethrowIfFatal(currentCoroutineContext())
            fail(e)
        }
    }



    /**
     * After the loop's scope ended abnormally (its children are done): reports the executions that were
     * still running, which all ended cancelled or finished just before.
     */
    private suspend fun drainCancelled() {
        position.failed = true
        position.halted = true
        val inbox = handoff?.inbox
        if (inbox != null) while (true) complete(inbox.poll() ?: break)
        for (execution in position.running) {
            if (execution == null) continue
            if (execution.status == Status.EXECUTING) execution.status = Status.CANCELLED
            complete(execution)
        }
    }

    private suspend fun loop() = coroutineScope {
        val keepAlive = checkpointer?.let { writer ->
            launch {
                try {
                    writer.keepLeaseAlive()
                } catch (e: Throwable) {
                    e.rethrowIfFatal(currentCoroutineContext())
                    // The next checkpoint fails with the store's own error and fails the run.
                }
            }
        }
        try {
            steps(this)
        } finally {
            keepAlive?.cancel()
            handoff?.closed = true
        }
    }

    private suspend fun steps(scope: CoroutineScope) {
        while (!drive(scope)) {
            val handoff = handoff!!
            work(scope, handoff, loop = true)
            handoff.wake.receive()
            handoff.join()
        }
        flush()
    }

    /**
     * Runs the scheduler while the caller holds the drive right (see [Handoff]): completes finished executions,
     * starts ready nodes. Returns true when nothing runs and nothing can start (the caller keeps the right), false
     * when it let the right go because it had nothing to do until a running node finishes.
     */
    private suspend fun drive(scope: CoroutineScope): Boolean {
        var missed = 1
        while (true) {
            startReady(scope)
            // One completion at a time, each followed by starting what it made ready: a successor never waits for the
            // checkpoints of other nodes' completions.
            val finished = handoff?.inbox?.poll()
            if (finished != null) {
                completeStep(finished)
                continue
            }
            if (position.runningCount == 0) {
                if (!position.halted && position.fallback()) continue
                return true
            }
            flush()
            missed = handoff!!.release(missed)
            if (missed == 0) return false
        }
    }

    /** Made by the loop when it queues the first execution; until then only the loop drives the scheduler. */
    private var handoff: Handoff? = null

    /** Node coroutines are children of the loop's scope on [childContext], combined once per run. */
    private var childScope: CoroutineScope? = null

    /** Queues a begun execution for a worker; see [Handoff]. */
    private fun enqueue(scope: CoroutineScope, execution: Execution) {
        val handoff = handoff ?: Handoff().also {
            handoff = it
            it.stalled = {
                // One runner at a time for a stalled queue, however long the dispatcher takes to start it.
                if (it.stallRunnerPending.compareAndSet(false, true)) {
                    it.join()
                    childScope!!.launch {
                        it.stallRunnerPending.set(false)
                        work(scope, it, loop = false)
                    }
                }
            }
        }
        if (childScope == null) childScope = CoroutineScope(scope.coroutineContext + childContext)
        handoff.queue.offer(execution)
    }

    private fun launchRunner(scope: CoroutineScope, handoff: Handoff) {
        childScope!!.launch {
            work(scope, handoff, loop = false)
        }
    }

    /**
     * Starts queued executions in the calling coroutine's thread until the queue is empty, counted as a worker
     * (the caller counted itself already). The run's [loop] starts only nodes known to be quick: its thread is the
     * caller's, which a long node must not hold (a UI thread, say); it hands the others to their own coroutine.
     *
     * In virtual time every node counts as long, whatever its start cost: which coroutine starts a node, and so the
     * order of same-instant completions, must not depend on how busy the host is. No worker is then ever counted
     * while inside a node, so queued work always has a worker polling it or a runner on its way, and the
     * [StallMonitor] is never needed.
     */
    private suspend fun work(scope: CoroutineScope, handoff: Handoff, loop: Boolean) {
        val costs = if (virtualTime) null else topology.startCosts
        while (true) {
            val execution = if (currentCoroutineContext().isActive) handoff.queue.poll() else null
            if (execution == null) {
                if (handoff.leave()) launchRunner(scope, handoff)
                return
            }
            handoff.polls++
            val long = costs == null || costs.get(execution.index) > QUICK_START_NANOS
            if (long && loop) {
                childScope!!.launch { startTimed(scope, handoff, execution) }
                continue
            }
            if (long) {
                if (handoff.leave()) launchRunner(scope, handoff)
            } else if (!handoff.queue.isEmpty()) {
                StallMonitor.watch(handoff)
            }
            startTimed(scope, handoff, execution)
            if (long) handoff.join()
        }
    }

    /**
     * [start], keeping how long it kept this thread busy in `Topology.startCosts` (a moving average); in virtual time
     * the start is neither measured nor recorded (the wall clock has no say there, see [work]).
     */
    private fun startTimed(scope: CoroutineScope, handoff: Handoff, execution: Execution) {
        if (virtualTime) return start(scope, handoff, execution)
        val costs = topology.startCosts
        val index = execution.index
        val started = System.nanoTime()
        start(scope, handoff, execution)
        val cost = System.nanoTime() - started
        val previous = costs.get(index)
        costs.lazySet(index, if (previous == Long.MAX_VALUE) cost else (previous * 3 + cost) / 4)
    }

    /**
     * Starts [execution] in a coroutine of its own, undispatched: it runs in this thread until it finishes or first
     * suspends, then resumes on [childContext]. When it finishes it hands itself over, and drives the scheduler
     * if nobody else does.
     */
    private fun start(scope: CoroutineScope, handoff: Handoff, execution: Execution) {
        childScope!!.launch(start = CoroutineStart.UNDISPATCHED) {
            try {
                // Not started when a fail-fast cancellation came first, or when the run was cancelled meanwhile.
                if (isActive && execution.claim(coroutineContext[Job]!!)) execution.run() else execution.status = Status.CANCELLED
            } finally {
                if (handoff.offer(execution)) driveFromNode(scope, handoff)
            }
        }
    }

    /**
     * A node's coroutine took the drive right: it runs the scheduler itself (no wake-up of the loop), and passes
     * the right to the loop when the run has nothing left to do or when it was cancelled itself (a fail-fast
     * cancellation: it must not suspend any more).
     */
    private suspend fun driveFromNode(scope: CoroutineScope, handoff: Handoff) {
        val done = try {
            !currentCoroutineContext().isActive || drive(scope)
        } catch (e: Throwable) {
            // Never lose the drive right: the loop takes over (or, when the run is cancelled, reports what is left).
            handoff.passToLoop()
            throw e
        }
        if (done) handoff.passToLoop()
    }

    private suspend fun startReady(scope: CoroutineScope) {
        var queued = 0
        try {
            startEach(scope) { queued++ }
        } finally {
            if (queued > 0) {
                val handoff = handoff!!
                if (handoff.needsRunner()) {
                    launchRunner(scope, handoff)
                } else if (!virtualTime) {
                    // A counted worker may be inside a node believed quick that is not quick this time (never in
                    // virtual time, where every node counts as long: see work()).
                    StallMonitor.watch(handoff)
                }
            }
        }
    }

    private suspend inline fun startEach(scope: CoroutineScope, onQueued: () -> Unit) {
        while (!position.halted && position.readyCount > 0 && position.runningCount < config.maxConcurrency) {
            if (drainRequested) {
                drained = true
                position.halted = true
                return
            }
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
            flush()
            if (position.runningCount == 1 && position.readyCount == 0) {
                execution.run()
                if (checkpointer == null) complete(execution) else completeStep(execution)
            } else {
                enqueue(scope, execution)
                onQueued()
            }
        }
    }

    private fun begin(index: Int): Execution {
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
        post { RunEvent.NodeStarted(runId, now(), execution.node.id, number) }
        return execution
    }

    private fun complete(execution: Execution) {
        val index = execution.index
        position.finish(index)
        attempts[index] += execution.attempt
        nanos[index] += execution.durationNanos
        when (execution.status) {
            Status.COMPLETED -> completed(execution)
            Status.FAILED -> failed(execution)
            Status.INTERRUPTED -> interrupted(execution)
            else -> post { RunEvent.NodeCancelled(runId, now(), execution.node.id, execution.number) }
        }
        nodeStatus[index] = execution.status
        checkpointer?.recordNode(index)
        execution.release()
        // A halted run starts nothing: tokens stay tokens (an interrupted node about to re-run must not take one).
        if (!position.halted) position.promote()
    }

    /** [complete], then a checkpoint when every step is saved. */
    private suspend fun completeStep(execution: Execution) {
        complete(execution)
        if (checkpointer?.everyStep == true && !position.failed) checkpointStep()
    }

    /** A node asked for input: the run stops starting nodes and ends INTERRUPTED once running ones finish. */
    private fun interrupted(execution: Execution) {
        interrupts += execution
        position.halted = true
        post { RunEvent.NodeCancelled(runId, now(), execution.node.id, execution.number) }
    }

    private fun completed(execution: Execution) {
        val refused = merge(execution)
        if (refused != null) {
            execution.status = Status.FAILED
            execution.error = refused
            failed(execution)
            return
        }
        if (position.failed) {
            sendCompleted(execution)
            return
        }
        val count = try {
            decideEdges(execution)
        } catch (e: Throwable) {
            e.rethrowIfFatal(null)
            execution.status = Status.FAILED
            execution.error = e
            failed(execution)
            return
        }
        sendCompleted(execution)
        val channels = topology.channels
        for (i in 0 until count) {
            val target = taken[i]
            if (events != null) {
                val to = if (target < 0) Graph.END else topology.nodes[target].id
                post { RunEvent.EdgeTaken(runId, now(), execution.node.id, to) }
            }
            // One token per target, however many of this execution's edges lead there.
            if (target >= 0 && !takenBefore(target, i)) position.trigger(target, channels.of(execution.index, target))
        }
    }

    private fun takenBefore(target: Int, i: Int): Boolean {
        for (j in 0 until i) if (taken[j] == target) return true
        return false
    }

    private fun sendCompleted(execution: Execution) = post {
        RunEvent.NodeCompleted(
            runId,
            now(),
            execution.node.id,
            execution.number,
            execution.attempt,
            Duration.ofNanos(execution.durationNanos),
        )
    }

    private fun failed(execution: Execution) {
        val error = execution.error!!
        post {
            RunEvent.NodeFailed(runId, now(), execution.node.id, execution.number, execution.attempt, error, Duration.ofNanos(execution.durationNanos))
        }
        fail(error)
    }

    /** Marks the run failed: nothing starts any more; with fail-fast, running nodes are cancelled. */
    private fun fail(error: Throwable) {
        errors += error
        if (position.failed) return
        position.failed = true
        position.halted = true
        if (config.failFast) cancelRunning()
    }

    /**
     * Cancels the executions still running. One whose body already finished is left alone: its completion is on its
     * way, and its coroutine may be the one driving the scheduler right now.
     */
    private fun cancelRunning() {
        for (execution in position.running) if (execution != null && execution.status == Status.EXECUTING) execution.cancel()
    }

    /**
     * Applies the execution's writes atomically; returns why they cannot be applied — a conflict, or the failure of
     * a reducer — instead of applying any of them.
     */
    private fun merge(execution: Execution): Throwable? {
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
        readBack?.refuse(execution)?.let { return it }
        val values = current.copyValues()
        for (i in 0 until count) {
            val k = execution.writeKeyAt(i)
            val update = execution.writeValueAt(i)
            @Suppress("UNCHECKED_CAST")
            val reducer = keys[k].reducer as dev.trellis.graph.Reducer<Any?>?
            val old = values[k]
            values[k] = if (reducer == null || old === State.Unset) {
                update
            } else {
                try {
                    reducer.reduce(old, update)
                } catch (e: Throwable) {
                    e.rethrowIfFatal(null)
                    return e
                }
            }
        }
        val versions = current.copyVersions()
        for (i in 0 until count) {
            val k = execution.writeKeyAt(i)
            versions[k] = ++position.version
            position.lastWriter[k] = execution.node.id
            if (checkpointer?.everyStep == true) checkpointer.recordWrite(k, execution.writeValueAt(i))
        }
        currentState = State.fromArrays(graph.schema, values, versions)
        return null
    }

    /** Reused by [decideEdges]: the loop is the only caller and consumes it before the next call. */
    private var taken = IntArray(4)

    /**
     * Decides the edges of [execution] against the merged state and returns how many were taken; their targets
     * (END is -1) are in [taken], in declaration order.
     */
    private fun decideEdges(execution: Execution): Int {
        val edges = topology.outgoing[execution.index]
        if (edges.isEmpty()) return 0
        if (taken.size < edges.size) taken = IntArray(edges.size)
        val state = currentState
        var count = 0
        for (edge in edges) {
            val target = edge.decide(state, execution.node.id)
            if (target != NOT_TAKEN) taken[count++] = target
        }
        return count
    }

    suspend fun emitCustom(execution: Execution, payload: Any) {
        nodeSend { RunEvent.Custom(runId, now(), execution.node.id, execution.number, payload) }
    }

    suspend fun emitRetrying(execution: Execution, error: Throwable, delay: Duration) {
        nodeSend { RunEvent.NodeRetrying(runId, now(), execution.node.id, execution.number, execution.attempt, error, delay) }
    }

    /**
     * Set while reporting a cancelled run (in [NonCancellable]): events still wait for a slow reader, so none
     * is dropped; a reader that stopped reading cancels the channel, and the events are then discarded.
     */
    private var draining = false

    /** Events the loop produced and has not handed to the collector yet; see [flush]. */
    private val pending = ArrayDeque<RunEvent>(0)

    /**
     * Queues an event of the loop. The loop [flush]es before any node starts and before it waits, so a node's
     * own events (custom, retrying) always come after its NodeStarted.
     */
    private inline fun post(event: () -> RunEvent) {
        if (events != null) pending.addLast(event())
    }

    /** Hands the queued events to the collector, suspending while it is slow (backpressure). */
    private suspend inline fun flush() {
        if (pending.isNotEmpty()) flushPending()
    }

    private suspend fun flushPending() {
        val channel = events ?: return
        while (pending.isNotEmpty()) {
            deliver(channel, pending.removeFirst())
        }
    }

    /**
     * Sends one of the run's own events. A send cancelled while suspended may or may not have delivered its event,
     * so the run's events are sent non-cancellably: a run timeout, the run's cancellation or a fail-fast
     * cancellation of the coroutine that drives the scheduler never loses or repeats one. They still wait for a slow
     * reader (backpressure); a reader that stopped reading cancels the channel, which ends the wait.
     */
    private suspend fun deliver(channel: SendChannel<RunEvent>, event: RunEvent) {
        if (channel.trySend(event).isSuccess) return
        try {
            withContext(NonCancellable) { channel.send(event) }
        } catch (e: ClosedSendChannelException) {
            if (!draining) throw e // The reader is gone.
        } catch (e: CancellationException) {
            if (!draining) throw e // The reader cancelled the channel; the run's own cancellation is rethrown by execute().
        }
    }

    /** Sends an event from a node's coroutine (not the loop's): straight to the channel. */
    private suspend inline fun nodeSend(event: () -> RunEvent) {
        events?.send(event())
    }

    private suspend inline fun send(event: () -> RunEvent) {
        val channel = events ?: return
        flush()
        deliver(channel, event())
    }

    private fun now(): Instant = Instant.now(clock)

    private fun result(status: Status): RunResult {
        val kept = history.toTypedArray()
        val counts = position.counts.copyOf()
        val statuses = Array(size) { lastExecution[it]?.status ?: nodeStatus[it] }
        val lastErrors = Array(size) { lastExecution[it]?.error }
        return RunResult(
            runId,
            graph.id,
            status,
            currentState,
            { nodeResults(kept, counts, statuses, lastErrors) },
            { kept.map { NodeExecution(it.node.id, it.number, it.status, it.attempt, Duration.ofNanos(it.durationNanos), it.error) } },
            dropped,
            Duration.ofNanos(nanoTime() - startNanos),
            errors.toList(),
            interrupts.map { Interrupt(it.node.id, it.interruptPayload ?: "") },
        )
    }

    private fun nodeResults(
        kept: Array<Execution>,
        counts: IntArray,
        statuses: Array<Status>,
        lastErrors: Array<Throwable?>,
    ): Map<String, NodeResult> {
        // The last failure of each node among the kept executions, in one pass (not one scan per node).
        val historyErrors = arrayOfNulls<Throwable>(size)
        for (execution in kept) execution.error?.let { historyErrors[execution.index] = it }
        val nodes = LinkedHashMap<String, NodeResult>()
        for (i in 0 until size) {
            val id = topology.nodes[i].id
            nodes[id] = NodeResult(id, statuses[i], counts[i], attempts[i], Duration.ofNanos(nanos[i]), lastErrors[i] ?: historyErrors[i])
        }
        return nodes
    }

}

