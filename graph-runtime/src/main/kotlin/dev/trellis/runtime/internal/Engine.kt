package dev.trellis.runtime.internal

import dev.trellis.checkpoint.CheckpointRef
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.Topology
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.RunTimeoutException
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.PositionEncoder
import dev.trellis.runtime.internal.checkpoint.ReadBack
import dev.trellis.runtime.internal.checkpoint.Restored
import dev.trellis.runtime.internal.checkpoint.TriggerData
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.channels.SendChannel
import kotlinx.coroutines.currentCoroutineContext
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
 * The scheduler of one run: its lifecycle, and what ties the pieces below together. Rules: `docs/semantics.md`.
 *
 * - **Lifecycle** (this file): [execute] resolves where nodes run and which time the run reads, claims the run's
 *   lease through the [Checkpointer], runs the loop (under the run's timeout), saves the final checkpoint and
 *   reports the run's end. A restored run starts from its [Restored] position.
 * - **The drive loop** (`Drive.kt`): whoever holds the *drive right* ([Handoff]) runs [drive] — completes finished
 *   executions, starts ready nodes. The state of the run is single-writer: only the holder touches it — the run's
 *   loop at first, then whichever node coroutine finishes while nobody drives, so a completion is processed on the
 *   thread that produced it instead of waking the loop. When exactly one node is ready and nothing else runs, the
 *   driver runs it inline, without a dispatch.
 * - **Workers** (`Workers.kt`): begun executions are queued in the [Handoff] and started, undispatched, by the loop
 *   or by runner coroutines, timed to learn which nodes start quickly.
 * - **Steps** (`Steps.kt`): what the driver does when an execution begins and when it ends — [merge] its writes
 *   (the merge rule, a pure function of the state and the writes), decide its edges ([EdgeChoice]), post its
 *   events, record its outcome.
 * - **Events** ([Outbox]): the loop's events are queued and flushed before any node starts and before the loop
 *   waits; a node's own events go straight to the channel.
 * - **Result** ([RunRecorder]): the history, per-node counts and times, errors and interrupts that make the
 *   [RunResult].
 * - **Checkpoints** ([Checkpointer]): the run's lease, and saving the position as full or delta checkpoints; the
 *   checkpoint format (payload classes, [PositionEncoder], codec, loader) is package `internal.checkpoint`.
 */
internal class Engine(
    val graph: Graph,
    input: State,
    val options: RunOptions,
    events: SendChannel<RunEvent>?,
    private val restored: Restored? = null,
    answers: Map<String, String> = emptyMap(),
    forkedFrom: CheckpointRef? = null,
    /** The sequence of the last checkpoint of this run in the store (0 for a new run or a fork). */
    lastSequence: Long = 0,
    /** Whether this is a new run id (a new run or a fork), which must not have checkpoints yet. */
    private val fresh: Boolean = restored == null,
) {
    val runId: String = options.runId ?: RunIds.next()
    val topology: Topology = graph.topology
    private val size = topology.size
    val config = graph.config
    val position = Position(size, input, topology.channels)
    val outbox = Outbox(events)
    val recorder = RunRecorder(topology, options.executionHistoryLimit)

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
    private var startNanos = 0L
    private val answers = arrayOfNulls<String>(size)

    @Volatile
    var drainRequested = false
    var drained = false
    val checkpointer: Checkpointer? = options.checkpointing
        ?.takeIf { it.mode != Checkpointing.Mode.OFF }
        ?.let { Checkpointer(graph, runId, it, options.clock, lastSequence, forkedFrom) }

    /** Reads back the first value written to each key, when the run saves checkpoints. */
    val readBack: ReadBack? = if (checkpointer != null) ReadBack(topology.keys) else null

    /** How long each node took to start in earlier runs of this graph ([StartCosts]); read by the workers. */
    val startCosts = StartCosts.of(topology)

    /** Reused by the steps to decide each execution's edges. */
    val edges = EdgeChoice()

    /** Made by the loop when it queues the first execution; until then only the loop drives the scheduler. */
    var handoff: Handoff? = null

    /** Node coroutines are children of the loop's scope on [childContext], combined once per run. */
    var childScope: CoroutineScope? = null

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
            recorder.nodeStatus[index] = Status.valueOf(node.status)
        }
        data.lastWriters.forEach { (key, node) ->
            graph.schema.keyOrNull(key)?.let {
                position.lastWriter[it.index] =
                    node
            }
        }
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
                "The checkpoint holds a trigger of node '${trigger.node}', which no edge of graph '${graph.id}' " +
                    "leads to any more; " +
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

    fun nanoTime(): Long = if (monotonic) System.nanoTime() else origin.elapsedNow().inWholeNanoseconds

    fun now(): Instant = Instant.now(clock)

    /**
     * Resolves where nodes run and which time the run reads, from [RunOptions] and the [caller]'s dispatcher: under a
     * kotlinx-coroutines-test scheduler (`runTest`), options left at their defaults take the caller's test dispatcher,
     * its virtual time and a clock of that virtual time (`docs/testing.md`).
     */
    private fun resolveTime(caller: ContinuationInterceptor?) {
        val test = TestSchedulers.testDispatcher(options.dispatcher ?: caller)
        childContext = options.dispatcher ?: test ?: Dispatchers.Default
        val timeSource = if (test != null &&
            options.timeSource === TimeSource.Monotonic
        ) {
            TestSchedulers.timeSource(test)
        } else {
            options.timeSource
        }
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
        val errors = recorder.errors
        outbox.send { RunEvent.RunStarted(runId, now(), graph.id, currentState) }
        if (restored == null) for (entry in topology.entries) position.markReady(entry)
        if (fresh && checkpointer?.everyStep == true) checkpointStep()
        val timeout = config.executionTimeout
        val status: Status
        try {
            if (timeout == null) {
                loop()
            } else if (withTimeoutOrNull(timeout) {
                    loop()
                    true
                } == null
            ) {
                fail(RunTimeoutException(timeout.toJavaDuration()))
                drainCancelled()
            }
            status = when {
                errors.isNotEmpty() -> Status.FAILED
                recorder.interrupts.isNotEmpty() -> Status.INTERRUPTED
                drained && position.readyCount + position.pendingTriggers > 0 -> Status.INTERRUPTED
                else -> Status.COMPLETED
            }
            // Inside the try: a run cancelled while its last checkpoint is saved ends CANCELLED like any other.
            if (checkpointer != null && !checkpointer.fencedOut) checkpointFinal(status)
        } catch (e: CancellationException) {
            withContext(NonCancellable) {
                outbox.draining = true
                drainCancelled()
                releaseLease()
                val result = result(Status.CANCELLED)
                onCancelled(result)
                outbox.send { RunEvent.RunCancelled(runId, now(), result) }
            }
            throw e
        }
        releaseLease()
        val result = result(if (errors.isEmpty()) status else Status.FAILED)
        outbox.send {
            when (result.status) {
                Status.COMPLETED -> RunEvent.RunCompleted(runId, now(), result)
                Status.INTERRUPTED -> RunEvent.RunInterrupted(runId, now(), result)
                else -> RunEvent.RunFailed(runId, now(), result.errors.first(), result)
            }
        }
        return result
    }

    /** Saves the full checkpoint of the run's end; a failure to save fails the run, a cancellation is rethrown. */
    private suspend fun checkpointFinal(status: Status) {
        val label = if (status == Status.INTERRUPTED && recorder.interrupts.isEmpty()) "DRAINED" else status.name
        try {
            checkpoint(label, full = true)
        } catch (e: Throwable) {
            e.rethrowIfFatal(currentCoroutineContext())
            recorder.errors += e
        }
    }

    /** Saves a checkpoint of the current position; a failure to save fails the run. */
    private suspend fun checkpoint(status: String, full: Boolean = false) {
        val writer = checkpointer ?: return
        val sequence = writer.checkpoint(status, full, currentState, position, recorder)
        outbox.post { RunEvent.CheckpointSaved(runId, now(), sequence, writer.lastWasFull) }
    }

    suspend fun checkpointStep() {
        try {
            checkpoint("RUNNING")
        } catch (e: Throwable) {
            e.rethrowIfFatal(currentCoroutineContext())
            fail(e)
        }
    }

    suspend fun emitCustom(execution: Execution, payload: Any) {
        outbox.nodeSend { RunEvent.Custom(runId, now(), execution.node.id, execution.number, payload) }
    }

    suspend fun emitRetrying(execution: Execution, error: Throwable, delay: Duration) {
        outbox.nodeSend {
            RunEvent.NodeRetrying(runId, now(), execution.node.id, execution.number, execution.attempt, error, delay)
        }
    }

    private fun result(status: Status): RunResult =
        recorder.result(runId, graph.id, status, currentState, position.counts, startNanos, nanoTime())
}
