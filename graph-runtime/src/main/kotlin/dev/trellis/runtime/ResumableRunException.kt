package dev.trellis.runtime

import dev.trellis.checkpoint.CheckpointStoreUnavailableException

/**
 * The run stopped before its end for a cause that is not the graph's — its checkpoint store stayed unreachable past
 * the store's own bound on retrying ([CheckpointStoreUnavailableException], the [cause]) — and **can be resumed**:
 * it saved no `FAILED` checkpoint, ran no compensation, and everything it had saved is kept. Thrown by `invoke`,
 * `resume` and `retry` (the Java futures fail with it); the event flow ends with `RunInterrupted` whose result has
 * [RunResult.stoppedBy] set. Its [result] is `INTERRUPTED`.
 *
 * Resume the run with `graph.resume(runId, options)` once the store answers: nodes that were running, and nodes
 * whose completion could not be saved, run again (at-least-once, as after a crash). The run's lease was released if
 * the store answered the release; otherwise it expires after the store's lease duration, and a resume before then by
 * another owner is refused with `RunOwnedException` (the same owner may resume at once). See
 * `docs/persistence.md`, "Faults".
 *
 * ```kotlin
 * try {
 *     graph.invoke(input, options)
 * } catch (e: ResumableRunException) {
 *     // later, once the database is back:
 *     graph.resume(e.runId, options)
 * }
 * ```
 */
public class ResumableRunException(
    /** The run's result when it stopped: status `INTERRUPTED`, [RunResult.stoppedBy] set. */
    public val result: RunResult,
    /** Why it stopped: the store stayed unreachable. */
    cause: CheckpointStoreUnavailableException,
) : RuntimeException(
        "Run '${result.runId}' of graph '${result.graphId}' stopped because its checkpoint store (${cause.store}) " +
            "stayed unreachable: ${cause.message} Nothing the run saved is lost and it did not fail: resume it " +
            "(graph.resume(\"${result.runId}\", options)) once the store answers again.",
        cause,
    ) {
    /** The id of the run to resume. */
    public val runId: String get() = result.runId

    /** The store's error: which store, which operation, for how long it was tried. */
    public val storeError: CheckpointStoreUnavailableException get() = cause as CheckpointStoreUnavailableException
}
