package dev.trellis.runtime

import kotlinx.coroutines.CoroutineDispatcher
import java.time.Clock
import kotlin.random.Random
import kotlin.time.TimeSource

/**
 * Per-run settings: the run id, where nodes run, and the clock, time source and random source the run
 * uses (all injectable so tests run in virtual time and are repeatable).
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
     * [kotlinx.coroutines.Dispatchers.Default].
     */
    public val dispatcher: CoroutineDispatcher? = null,
    /** The wall clock of event timestamps. */
    public val clock: Clock = Clock.systemUTC(),
    /** The time source of durations; pass `testScheduler.timeSource` in virtual-time tests. */
    public val timeSource: TimeSource = TimeSource.Monotonic,
    /** The random source of retry jitter. */
    public val random: Random = Random.Default,
    /** How many executions [RunResult.executions] keeps (the most recent); older ones are counted only. */
    public val executionHistoryLimit: Int = 10_000,
    /** Where and how often the run saves checkpoints; null for none. */
    public val checkpointing: Checkpointing? = null,
    /** A control to drain the run gracefully; null for none. */
    public val control: RunControl? = null,
) {
    init {
        require(executionHistoryLimit >= 0) { "executionHistoryLimit must not be negative, but was $executionHistoryLimit." }
        require(runId == null || runId.isNotBlank()) { "runId must not be blank; pass null for a generated id." }
    }

    /** Defaults. */
    public companion object {
        /** The default options. */
        @JvmField
        public val DEFAULT: RunOptions = RunOptions()
    }
}
