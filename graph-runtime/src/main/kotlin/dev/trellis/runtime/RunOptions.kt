package dev.trellis.runtime

import dev.trellis.checkpoint.NodeCache
import dev.trellis.graph.NodeInterceptor
import kotlinx.coroutines.CoroutineDispatcher
import java.time.Clock
import kotlin.random.Random
import kotlin.time.TimeSource

/**
 * Per-run settings: the run id, where nodes run, and the clock, time source and random source the run
 * uses (all injectable so tests run in virtual time and are repeatable).
 *
 * Under `runTest` (kotlinx-coroutines-test) nothing needs setting for virtual time: a run whose caller runs on a
 * test dispatcher and whose [dispatcher], [timeSource] and [clock] are left at their defaults takes the caller's
 * test dispatcher, its virtual time and a clock of that virtual time (`docs/testing.md`).
 *
 * ```kotlin
 * graph.invoke(input, RunOptions(dispatcher = Dispatchers.IO, runId = "order-42"))
 * ```
 */
public class RunOptions(
    /** The run's id; a random UUID when null. */
    public val runId: String? = null,
    /**
     * Where nodes run. When null, the run's loop runs in the caller's context and parallel nodes run on
     * [kotlinx.coroutines.Dispatchers.Default] — or, when the caller runs on a kotlinx-coroutines-test `TestDispatcher`
     * (inside `runTest`), on that dispatcher, in virtual time.
     */
    public val dispatcher: CoroutineDispatcher? = null,
    /**
     * The wall clock of event timestamps, checkpoint times and lease renewal. Left at its default (the system UTC clock)
     * while nodes run on a test dispatcher, events are stamped with that dispatcher's virtual time counted from the
     * epoch instead; checkpoints and leases keep this clock, as stores judge leases by theirs.
     */
    public val clock: Clock = Clock.systemUTC(),
    /**
     * The time source of durations. Left at its default ([TimeSource.Monotonic]) while nodes run on a test dispatcher,
     * the run measures that dispatcher's virtual time instead. A run in virtual time (a test dispatcher, or any time
     * source but the monotonic one) makes no scheduling decision from the wall clock (`docs/semantics.md` §10).
     */
    public val timeSource: TimeSource = TimeSource.Monotonic,
    /** The random source of retry jitter. */
    public val random: Random = Random.Default,
    /** How many executions [RunResult.executions] keeps (the most recent); older ones are counted only. */
    public val executionHistoryLimit: Int = 10_000,
    /** Where and how often the run saves checkpoints; null for none. */
    public val checkpointing: Checkpointing? = null,
    /** A control to drain the run gracefully; null for none. */
    public val control: RunControl? = null,
    /**
     * Interceptors of every node of the run, outermost first, outside the graph's and the nodes' own
     * (`docs/semantics.md` §13).
     */
    public val interceptors: List<NodeInterceptor> = emptyList(),
    /**
     * Where cached nodes keep their results (`docs/semantics.md` §13.5): an `InMemoryNodeCache`, `SqliteNodeCache` or
     * `PostgresNodeCache`; child runs use it too. Null (the default) for none: a run of a graph with a cached node
     * then fails at its start, naming the node.
     */
    public val cache: NodeCache? = null,
    /**
     * The run's limits — node executions, time spent, meters — or null for none beyond the graph's
     * (`docs/semantics.md` §13.4).
     */
    public val budget: Budget? = null,
    /**
     * Whether a cancelled run runs the compensations of its completed executions, as a failed run does
     * (`docs/semantics.md` §13.6); the caller's cancellation then waits for them. Default false.
     */
    public val compensateOnCancel: Boolean = false,
) {
    init {
        require(
            executionHistoryLimit >= 0,
        ) { "executionHistoryLimit must not be negative, but was $executionHistoryLimit." }
        require(runId == null || runId.isNotBlank()) { "runId must not be blank; pass null for a generated id." }
    }

    /**
     * These options with [interceptors] in place of this [RunOptions.interceptors], every other setting kept: how a
     * library adds its interceptor to the options it is given,
     * `options.withInterceptors(listOf(mine) + options.interceptors)`.
     */
    public fun withInterceptors(interceptors: List<NodeInterceptor>): RunOptions =
        with(runId, control, interceptors = interceptors.toList())

    /**
     * These options with [runId], [control] (and [interceptors], [budget]) replaced: the one place a run's options are
     * copied (a resumed run, a child run, [withInterceptors]), so that no copy forgets a setting.
     */
    internal fun with(
        runId: String?,
        control: RunControl?,
        budget: Budget? = this.budget,
        interceptors: List<NodeInterceptor> = this.interceptors,
    ): RunOptions = RunOptions(
        runId,
        dispatcher,
        clock,
        timeSource,
        random,
        executionHistoryLimit,
        checkpointing,
        control,
        interceptors,
        cache,
        budget,
        compensateOnCancel,
    )

    /** Defaults. */
    public companion object {
        /** The default options. */
        @JvmField
        public val DEFAULT: RunOptions = RunOptions()
    }
}
