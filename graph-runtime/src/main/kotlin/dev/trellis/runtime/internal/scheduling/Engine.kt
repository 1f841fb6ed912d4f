package dev.trellis.runtime.internal.scheduling

import dev.trellis.checkpoint.CheckpointRef
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.State
import dev.trellis.graph.Topology
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.RunIds
import dev.trellis.runtime.internal.checkpoint.PositionEncoder
import dev.trellis.runtime.internal.checkpoint.ReadBack
import dev.trellis.runtime.internal.checkpoint.Restored
import dev.trellis.runtime.internal.composition.ChildPlan
import dev.trellis.runtime.internal.composition.Nesting
import dev.trellis.runtime.internal.composition.childOptionsOf
import dev.trellis.runtime.internal.events.EventLog
import dev.trellis.runtime.internal.events.Outbox
import dev.trellis.runtime.internal.events.RunRecorder
import dev.trellis.runtime.internal.execution.Answers
import dev.trellis.runtime.internal.execution.GraphRuntime
import dev.trellis.runtime.internal.execution.StartCosts
import dev.trellis.runtime.internal.execution.interceptorTable
import dev.trellis.runtime.internal.execution.plainContext
import dev.trellis.runtime.internal.execution.taskInterceptorTable
import dev.trellis.runtime.internal.persistence.Checkpointer
import dev.trellis.runtime.internal.persistence.Upstream
import dev.trellis.runtime.internal.persistence.checkpoint
import dev.trellis.runtime.internal.persistence.restore
import dev.trellis.runtime.internal.policies.CompensationLog
import dev.trellis.runtime.internal.policies.meters
import dev.trellis.runtime.internal.policies.spentNanos
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.withContext
import java.time.Clock
import java.time.Instant
import java.util.concurrent.atomic.AtomicLongArray
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import kotlin.coroutines.ContinuationInterceptor
import kotlin.time.TimeMark
import kotlin.time.TimeSource

/**
 * The scheduler of one run: its lifecycle, and what ties the pieces below together. Rules: `docs/semantics.md`.
 * The other runtime packages are the parts of an engine (see the package overviews, `Package.kt` in each).
 *
 * - **Lifecycle** (this file): [execute] resolves where nodes run and which time the run reads, claims the run's
 *   lease through the [Checkpointer], runs the loop (under the run's timeout), saves the final checkpoint and
 *   reports the run's end. A restored run starts from its [Restored] position (`persistence/Restore.kt`); the
 *   answers to its interrupts are its [Answers].
 * - **The drive loop** (`Drive.kt`): whoever holds the *drive right* ([DriveRight]) runs [drive] — completes finished
 *   executions, starts ready nodes. The state of the run is single-writer: only the holder touches it — the run's
 *   loop at first, then whichever node coroutine finishes while nobody drives, so a completion is processed on the
 *   thread that produced it instead of waking the loop. When exactly one node is ready and nothing else runs, the
 *   driver runs it inline, without a dispatch.
 * - **Workers** (`execution/Workers.kt`): begun executions are queued in the [DriveRight] and started,
 *   undispatched, by the loop or by runner coroutines, timed to learn which nodes start quickly.
 * - **Steps** (`Steps.kt`): what the driver does when an execution begins and when it ends — [merge] its writes
 *   (the merge rule, a pure function of the state and the writes), decide its edges ([EdgeChoice]), post its
 *   events, record its outcome.
 * - **Events** ([Outbox], [EventLog]): every event is added to the run's log with its sequence number as it is
 *   made; the driver waits for room before any node starts and before it waits.
 * - **Result** ([RunRecorder]): the history, per-node counts and times, errors and interrupts that make the
 *   [RunResult].
 * - **Checkpoints** ([Checkpointer]): the run's lease, and saving the position as full or delta checkpoints
 *   (when the run saves one: `persistence/RunCheckpoints.kt`); the checkpoint format (payload classes,
 *   [PositionEncoder], codec, loader) is package `internal.checkpoint`.
 */
internal class Engine(
    val graph: Graph,
    input: State,
    val options: RunOptions,
    events: EventLog?,
    val restored: Restored? = null,
    answers: Map<String, String> = emptyMap(),
    forkedFrom: CheckpointRef? = null,
    /** The sequence of the last checkpoint of this run in the store (0 for a new run or a fork). */
    lastSequence: Long = 0,
    /** Whether this is a new run id (a new run or a fork), which must not have checkpoints yet. */
    val fresh: Boolean = restored == null,
    /** Where this run sits when it is the child run of a subgraph node or map task, or null for a run of its own. */
    val nesting: Nesting? = null,
    /** Whether this run retries a failed run (`retry`): its first checkpoint, saved before any node, says so. */
    val retrying: Boolean = false,
) {
    val runId: String = options.runId ?: RunIds.next()
    val topology: Topology = graph.topology
    private val size = topology.size
    val config = graph.config

    /**
     * What the runtime keeps across the runs of this graph (start costs, a spare [Position]); a child run's comes from
     * its parent's plan for that child graph, looked up once per parent run ([ChildPlan]).
     */
    private val graphRuntime = nesting?.plan?.runtime ?: StartCosts.runtimeOf(topology)

    /**
     * The scheduler's position; a new run takes the one the last run of its graph left ([GraphRuntime]): a run of its
     * own without checkpoints leaves its position when it returns ([execute]), a child run when its parent has read it
     * (`composition/Composition.kt`).
     */
    val position = (if (restored == null) spareOf(nesting) else null)
        ?: Position(size, topology.keys.size, topology.channels)

    private fun spareOf(nesting: Nesting?): Position? =
        if (nesting?.alone == true) nesting.plan.takeSpare() else graphRuntime.takePosition()

    val outbox = Outbox(events)
    val recorder = RunRecorder(topology, options.executionHistoryLimit)

    /**
     * The run's state: the input, then each merge's ([mergeWrites]). Written by the driver only, with a release store
     * (no fence on the merge path); read by the driver, and by a retrying node for its next attempt's snapshot (a
     * [State] is immutable, its fields final). Set first, before anything reads it.
     */
    @Volatile
    @JvmField // for its field updater: written through [currentState] only
    var state: State? = null

    var currentState: State
        get() = state!!
        set(value) {
            STATE.lazySet(this, value)
        }

    init {
        STATE.lazySet(this, restored?.state ?: input)
    }

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

    /** When the run started ([nanoTime]): read by [execute], unless [startAt] gave it ([startGiven]). */
    private var startNanos = 0L
    private var startGiven = false

    /**
     * Gives a child run its start: the reading of the clock its subgraph node or map task started at, a moment
     * before (the same clock: a child run reads its parent's time), instead of a reading of its own.
     */
    fun startAt(nanos: Long) {
        startNanos = nanos
        startGiven = true
    }

    /** When this segment of the run started ([nanoTime]), for the budget's wall time (`policies/Meters.kt`). */
    val segmentStart: Long get() = startNanos

    /** The time the run spent running in earlier segments (restored from its checkpoint). */
    var spentBefore = 0L
        private set

    /** The budget's `maxWallTime` in nanoseconds, or -1 for none (the run then never reads the time for it). */
    val wallLimitNanos: Long = if (nesting == null) options.budget?.maxWallTime?.inWholeNanoseconds ?: -1L else -1L

    /** The executions the run may start: the smaller of the graph's and the budget's `maxNodeExecutions`. */
    val maxExecutions: Int = minOf(config.maxNodeExecutions, options.budget?.maxNodeExecutions ?: Int.MAX_VALUE)

    /** The answers to pending interrupts by path; a child run gets those under its path. */
    val answers = Answers.of(answers)

    /**
     * The paths of a child run's nodes, made as asked for ([pathOf]); null in a run of its own, and in a child run
     * until a path is first asked for (a child run without events or interrupts never asks).
     */
    private var nestedPaths: Array<String?>? = null

    /**
     * The path of node [index] (`docs/semantics.md` §11): its id, after the path of the child run it is in. A child
     * run's are made when first asked for (events, interrupts), by whichever thread asks (a race makes equal strings).
     */
    fun pathOf(index: Int): String {
        val nesting = nesting ?: return topology.nodes[index].id
        val paths = nestedPaths ?: arrayOfNulls<String>(size).also { nestedPaths = it }
        return paths[index] ?: (nesting.prefix + topology.nodes[index].id).also { paths[index] = it }
    }

    /** The child runs and map tasks restored with the run, by key (`research#2`, `summarize#1[3]`). */
    val restoredChildren: MutableMap<String, dev.trellis.runtime.internal.checkpoint.ChildData> =
        restored?.children?.takeIf { it.isNotEmpty() }?.let { HashMap(it) } ?: java.util.Collections.emptyMap()

    /**
     * The options of this run's child runs (`composition/Composition.kt`), made by the first one (a race makes equal
     * ones); a child run's own options are already those of its child runs (the same run id, no control, no budget).
     */
    val childOptions: RunOptions
        get() = childOptionsMade ?: (if (nesting != null) options else childOptionsOf(options, runId))
            .also { childOptionsMade = it }
    private var childOptionsMade: RunOptions? = null

    /** What the child runs of one child graph share ([ChildPlan]): the last child graph's, made by its first run. */
    @Volatile
    private var childPlan: ChildPlan? = null

    /** The [ChildPlan] of the child runs of [child] (a race makes equal ones). */
    fun childPlanOf(child: Graph): ChildPlan =
        childPlan?.takeIf { it.graph === child } ?: ChildPlan(child, childOptions).also { childPlan = it }

    /**
     * The results of the last child run of each subgraph node and map task, by path, for the [RunResult]; null until
     * the first child run ends ([childResultsMap]).
     */
    @Volatile
    var childResults: MutableMap<String, RunResult>? = null
        private set

    /** [childResults], made by the first child run that ends (map tasks end concurrently). */
    fun childResultsMap(): MutableMap<String, RunResult> = childResults ?: synchronized(this) {
        childResults ?: java.util.concurrent.ConcurrentHashMap<String, RunResult>().also { childResults = it }
    }

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
                graphRuntime,
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
    val startCosts: AtomicLongArray get() = graphRuntime.costs

    /** The interceptors of each node, or null when the run has none (`execution/Interceptors.kt`). */
    val interceptors: Array<Array<NodeInterceptor>?>?

    /** The interceptors that also wrap map tasks, by node, or null when none does (`execution/Interceptors.kt`). */
    val taskInterceptors: Array<Array<NodeInterceptor>?>?

    init {
        // A child run's tables are its parent's for that child graph: the same options, made once per parent run.
        val plan = nesting?.plan
        interceptors = if (plan != null) plan.interceptors else interceptorTable(graph, options, graphRuntime)
        taskInterceptors = if (plan != null) plan.taskInterceptors else taskInterceptorTable(interceptors)
    }

    /** The completed executions to compensate should the run fail (`policies/CompensationLog.kt`), or null. */
    var compensationLog: CompensationLog? = null

    /** Reused by the steps to decide each execution's edges. */
    val edges = EdgeChoice()

    /** Made by the loop when it queues the first execution; until then only the loop drives the scheduler. */
    var driveRight: DriveRight? = null

    /** How many executions the driver queued in its current [startReady] (the driver's alone). */
    var queuedByDriver = 0

    /** Node coroutines are children of the loop's scope on [childContext], combined once per run. */
    var childScope: CoroutineScope? = null

    /** Whether [childScope]'s context lets node coroutines start without a context switch ([plainContext]). */
    var plainChildren = false

    init {
        if (nesting == null) this.answers.requireNodesOf(graph)
        if (restored != null) {
            restore(restored)
            spentBefore = restored.data.spentNanos
        }
        checkpointer?.seedChildren(restoredChildren)
    }

    /** Whether this run, or a run it is a child of, was asked to drain. */
    val drainWanted: Boolean get() = drainRequested || nesting?.parent?.drainWanted == true

    fun nanoTime(): Long = if (monotonic) System.nanoTime() else origin.elapsedNow().inWholeNanoseconds

    fun now(): Instant = Instant.now(clock)

    /**
     * Resolves where nodes run and which time the run reads, from [RunOptions] and the [caller]'s dispatcher: under a
     * kotlinx-coroutines-test scheduler (`runTest`), options left at their defaults take the caller's test dispatcher,
     * its virtual time and a clock of that virtual time (`docs/testing.md`).
     */
    private fun resolveTime(caller: ContinuationInterceptor?) {
        val parent = nesting?.parent
        if (parent != null) {
            // A child run reads its parent's time: the same options, and a caller inside the parent's run.
            childContext = parent.childContext
            monotonic = parent.monotonic
            if (!monotonic) origin = parent.origin
            clock = parent.clock
            virtualTime = parent.virtualTime
            return
        }
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
        if (!monotonic) origin = timeSource.markNow() // the monotonic source is read directly (nanoTime)
        virtualTime = test != null || !monotonic
    }

    /** Runs to the end and returns the result; a cancelled caller gets its [CancellationException] rethrown. */
    suspend fun execute(onCancelled: (RunResult) -> Unit = {}): RunResult {
        resolveTime(if (nesting == null) currentCoroutineContext()[ContinuationInterceptor] else null)
        if (!startGiven) startNanos = nanoTime()
        // A new run's state (its input, a fork's edit) is checked before anything is claimed or run.
        if (fresh) readBack?.requireReadable(currentState)
        checkpointer?.open(fresh, timedRenewal = !virtualTime)
        val unregister = options.control?.register { drainRequested = true }
        try {
            val result = runToEnd(onCancelled)
            // Nothing reads the position of a run of its own once it returned (a child run's is read by its parent).
            if (nesting == null && checkpointer == null) graphRuntime.givePosition(position)
            // Every child run has ended: the last plan's spare position goes to the next run of its graph.
            childPlan?.giveBackSpare()
            return result
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
    suspend fun releaseLease() {
        if (checkpointer != null) withContext(NonCancellable) { checkpointer.close() }
    }
}

/** [Position.lastEnd] when there is no reading to share. */
internal const val NO_READING = Long.MIN_VALUE

/** [Engine.currentState]'s release stores. */
private val STATE: AtomicReferenceFieldUpdater<Engine, State> =
    AtomicReferenceFieldUpdater.newUpdater(Engine::class.java, State::class.java, "state")
