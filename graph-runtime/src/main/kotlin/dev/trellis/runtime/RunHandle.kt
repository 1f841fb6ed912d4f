package dev.trellis.runtime

import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Job

/**
 * A run started with `Graph.start`: [cancel] it, or [await] its result.
 */
public class RunHandle internal constructor(
    /** The run's id. */
    public val runId: String,
    private val job: Job,
    /** The run's result, completed after the last event was delivered. */
    public val result: Deferred<RunResult>,
) {
    /** Cancels the run: running nodes are cancelled cooperatively and the run ends CANCELLED. */
    public fun cancel() {
        job.cancel()
    }

    /** Whether the run has ended. */
    public val isDone: Boolean get() = result.isCompleted

    /** Waits for the run's result (status COMPLETED, FAILED or CANCELLED). */
    public suspend fun await(): RunResult = result.await()

    override fun toString(): String = "RunHandle($runId, done=$isDone)"
}
