package dev.trellis.runtime.internal

import dev.trellis.checkpoint.CheckpointRef
import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeInterceptor
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
import dev.trellis.runtime.internal.checkpoint.writableState
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
    /** Where this run sits when it is the child run of a subgraph node or map task, or null for a run of its own. */
    val nesting: Nesting? = null,
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

    /** When this segment of the run started ([nanoTime]), for the budget's wall time (`Meters.kt`). */
    val segmentStart: Long get() = startNanos

    /** The time the run spent running in earlier segments (restored from its checkpoint). */
    var spentBefore = 0L
        private set

    /** The budget's `maxWallTime` in nanoseconds, or -1 for none (the run then never reads the time for it). */
    val wallLimitNanos: Long = if (nesting == null) options.budget?.maxWallTime?.inWholeNanoseconds ?: -1L else -1L

    /** The executions the run may start: the smaller of the graph's and the budget's `maxNodeExecutions`. */
    val maxExecutions: Int = minOf(config.maxNodeExecutions, options.budget?.maxNodeExecutions ?: Int.MAX_VALUE)

    /** The answers to pending interrupts by path; a child run gets those under its path. */
    private val answers: MutableMap<String, String> = HashMap(answers)

    /** Each node's path (`docs/semantics.md` §11): its id, after the path of the child run it is in. */
    val paths: Array<String> = Array(size) { (nesting?.prefix ?: "") + topology.nodes[it].id }

    /** The child runs and map tasks restored with the run, by key (`research#2`, `summarize#1[3]`). */
    val restoredChildren: MutableMap<String, dev.trellis.runtime.internal.checkpoint.ChildData> =
        HashMap(restored?.children ?: emptyMap())

    /** The options of this run's child runs (`Composition.kt`). */
    val childOptions: RunOptions by lazy { childOptionsOf(options, runId) }

    /** The results of the last child run of each subgraph node and map task, by path, for the [RunResult]. */
    val childResults: MutableMap<String, RunResult> = java.util.concurrent.ConcurrentHashMap()

    @Volatile
    var drainRequested = false
    var drained = false
    val checkpointer: Checkpointer? = options.checkpointing
        ?.takeIf { it.mode != Checkpointing.Mode.OFF }
        ?.let {
            Checkpointer(
                graph,
                runId,
                it,
                options.clock,
                lastSequence,
                forkedFrom,
                nesting?.let {
                    n ->
                    n.parent.checkpointer?.let { p -> Upstream(p, n.key) }
                },
            )
        }

    /** Reads back the first value written to each key, when the run saves checkpoints. */
    val readBack: ReadBack? = if (checkpointer != null) ReadBack(topology.keys) else null

    /** How long each node took to start in earlier runs of this graph ([StartCosts]); read by the workers. */
    val startCosts = StartCosts.of(topology)

    /** The interceptors of each node, or null when the run has none (`Interceptors.kt`). */
    val interceptors: Array<Array<NodeInterceptor>?>? = interceptorTable(graph, options)

    /** The completed executions to compensate should the run fail (`Saga.kt`); null while there are none. */
    var saga: Saga? = null

    /** Reused by the steps to decide each execution's edges. */
    val edges = EdgeChoice()

    /** Made by the loop when it queues the first execution; until then only the loop drives the scheduler. */
    var handoff: Handoff? = null

    /** Node coroutines are children of the loop's scope on [childContext], combined once per run. */
    var childScope: CoroutineScope? = null

    init {
        if (nesting == null) {
            for (path in answers.keys) {
                val nodeId = path.substringBefore('/').substringBefore('[')
                require(topology.indexOf(nodeId) >= 0) {
                    "Cannot answer '$path': graph '${graph.id}' has no node '$nodeId'."
                }
            }
        }
        if (restored != null) restore(restored)
        checkpointer?.seedChildren(restoredChildren)
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
        position.meters = Meters.decoded(data.meters, data.spentNanos)
        spentBefore = data.spentNanos
        position.restore(
            counts,
            data.totalExecutions,
            data.version,
            data.triggers.sortedBy { it.stamp }.map { tokensOf(it) },
            data.ready.map { topology.indexOf(it) },
        )
        restoreSaga(data.compensable, data.compensations, data.errors)
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

    /** The answer for the interrupt at [path], once. */
    fun takeAnswer(
        path: String,
    ): String? = if (answers.isEmpty()) null else synchronized(answers) { answers.remove(path) }

    /**
     * Whether this run holds an answer for the node at [path] or for anything under it (`research/approve`,
     * `research[2]`): that execution resumes an interrupt, and bypasses the node cache (`docs/semantics.md` §13.5).
     */
    fun hasAnswersUnder(path: String): Boolean = answers.isNotEmpty() &&
        synchronized(answers) {
            answers.keys.any { it == path || it.startsWith("$path/") || it.startsWith("$path[") }
        }

    /** The answers for the interrupts under [prefix] (a child run's), taken from this run's. */
    fun takeAnswers(prefix: String): Map<String, String> {
        if (answers.isEmpty()) return emptyMap()
        synchronized(answers) {
            val taken = answers.filterKeys { it.startsWith(prefix) }
            answers.keys.removeAll(taken.keys)
            return taken
        }
    }

    /** Whether this run, or a run it is a child of, was asked to drain. */
    val drainWanted: Boolean get() = drainRequested || nesting?.parent?.drainWanted == true

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
        if (nesting == null) outbox.send { RunEvent.RunStarted(runId, now(), graph.id, currentState) }
        val compensating = compensating
        if (restored == null) for (entry in topology.entries) position.markReady(entry)
        if (wallLimitNanos >= 0 && position.meters == null) position.meters = Meters() // time spent is checkpointed
        checkBudgetAtStart()
        // A resumed run with composite nodes starts a new delta chain here, so that a child's checkpoint never
        // extends the chain another process wrote (docs/persistence.md, nested checkpoints).
        if (checkpointer?.everyStep == true && !compensating &&
            (fresh || (graph.hasComposites && nesting == null))
        ) {
            checkpointStep()
        }
        val timeout = config.executionTimeout
        val status: Status
        try {
            if (compensating) {
                // Restored while compensating (`docs/semantics.md` §13.6): no node runs, the compensations finish.
            } else if (timeout == null) {
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
            if (status == Status.FAILED && nesting == null && saga != null) compensate()
            // Inside the try: a run cancelled while its last checkpoint is saved ends CANCELLED like any other.
            if (checkpointer != null && !checkpointer.fencedOut) checkpointFinal(status)
        } catch (e: CancellationException) {
            withContext(NonCancellable) {
                outbox.draining = true
                drainCancelled()
                if (options.compensateOnCancel && nesting == null && saga != null) compensate()
                releaseLease()
                val result = result(Status.CANCELLED)
                onCancelled(result)
                if (nesting == null) outbox.send { RunEvent.RunCancelled(runId, now(), result) } else outbox.flush()
            }
            throw e
        }
        releaseLease()
        val result = result(if (errors.isEmpty()) status else Status.FAILED)
        if (nesting != null) {
            outbox.flush()
            return result
        }
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
        val asked = recorder.interrupts.any { it.nestedInterrupts?.isEmpty() != true }
        val label = if (status == Status.INTERRUPTED && !asked) "DRAINED" else status.name
        try {
            checkpoint(label, full = true)
        } catch (e: Throwable) {
            e.rethrowIfFatal(currentCoroutineContext())
            recorder.errors += e
            if (e !is CheckpointStoreException) saveFailure()
        }
    }

    /**
     * The run's end could not be checkpointed because the checkpoint could not be written (a value its serializer
     * cannot write): saves a FAILED checkpoint without the values that cannot be written, holding the errors, so
     * that the store tells the truth instead of showing the run RUNNING at an earlier checkpoint.
     */
    private suspend fun saveFailure() {
        try {
            checkpoint(Status.FAILED.name, full = true, state = writableState(topology.keys, currentState))
        } catch (e: Throwable) {
            e.rethrowIfFatal(currentCoroutineContext())
            recorder.errors[0].addSuppressed(e)
        }
    }

    /** Saves a checkpoint of the current position; a failure to save fails the run. */
    suspend fun checkpoint(status: String, full: Boolean = false, state: State = currentState) {
        val writer = checkpointer ?: return
        position.meters?.spentNanos = spentNanos()
        val sequence = writer.checkpoint(status, full, state, position, recorder, saga)
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
        outbox.nodeSend {
            RunEvent.Custom(runId, now(), execution.node.id, execution.number, payload, execution.path, execution.task)
        }
    }

    suspend fun emitRetrying(execution: Execution, error: Throwable, delay: Duration) {
        outbox.nodeSend {
            RunEvent.NodeRetrying(
                runId,
                now(),
                execution.node.id,
                execution.number,
                execution.attempt,
                error,
                delay,
                execution.path,
                execution.task,
            )
        }
    }

    private fun result(status: Status): RunResult = recorder.result(
        runId,
        graph.id,
        status,
        currentState,
        position.counts,
        startNanos,
        nanoTime(),
        childResults,
        position.meters?.asDoubles() ?: emptyMap(),
        saga?.results?.toList() ?: emptyList(),
    )
}
