package dev.trellis.runtime

/** The lifecycle status of a node execution or of a whole run. */
public enum class Status {
    /** Not started (a node that was never triggered stays pending). */
    PENDING,

    /** Running, or waiting between retry attempts. */
    EXECUTING,

    /** Finished successfully. */
    COMPLETED,

    /** Failed; the error is kept in the result. */
    FAILED,

    /** Cancelled by the caller, a fail-fast failure or a run timeout. */
    CANCELLED,

    /** Paused for input (runs only); resumable from its checkpoint. */
    INTERRUPTED,
    ;

    /** Whether this status is final for a run or an execution. */
    public val isTerminal: Boolean get() = this != PENDING && this != EXECUTING
}
