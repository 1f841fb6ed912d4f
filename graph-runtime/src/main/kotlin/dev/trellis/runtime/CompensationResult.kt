package dev.trellis.runtime

/**
 * The outcome of the compensation of one completed execution of a failed run (`docs/semantics.md` §13.6).
 *
 * [status] is [Status.COMPLETED] when the compensation returned, [Status.FAILED] when it threw [error], and
 * [Status.CANCELLED] when it was cut off — the caller cancelled the run while it ran, or the process stopped while it
 * ran and the run was resumed (it is not run again: at most once).
 */
public class CompensationResult internal constructor(
    /** The node whose execution was compensated. */
    public val nodeId: String,
    /** The execution number compensated. */
    public val execution: Int,
    /** Where the node is (`research/book` inside a child run, `docs/semantics.md` §11). */
    public val path: String,
    /** How the compensation ended. */
    public val status: Status,
    /** Why it failed, or null. */
    public val error: Throwable?,
) {
    override fun toString(): String =
        "CompensationResult($path#$execution, $status${if (error == null) "" else ", error=$error"})"
}

/**
 * The failure of a run that failed in an earlier process and was resumed to finish its compensations
 * (`docs/semantics.md` §13.6): the original exception did not survive the process, its [description] did.
 */
public class ResumedFailureException(
    /** The original failure's `toString()`, as the checkpoint recorded it. */
    public val description: String,
) : RuntimeException("The run failed before it was resumed to finish its compensations: $description")
