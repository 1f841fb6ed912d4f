package dev.trellis.functional

/**
 * Thrown when a resumed run's code calls its steps differently from the run it resumes (a step of another name at a
 * position, or fewer steps than were recorded): replaying would silently diverge, so the run stops instead
 * (`docs/semantics.md` §14).
 */
public class WorkflowNondeterminismException(
    /** The run. */
    public val runId: String,
    /** The position (0-based call order) of the first difference. */
    public val position: Int,
    message: String,
) : IllegalStateException(message)

/**
 * The workflow paused for input: it called `interrupt` with [payload] at [position], and the run is recorded as
 * waiting for the answer. Resume it with `Workflow.resume(runId, answer, store)`; the interrupt then returns the
 * answer and the run goes on (completed tasks are not run again).
 */
public class WorkflowInterruptedException(
    /** The run. */
    public val runId: String,
    /** The interrupt's position in call order. */
    public val position: Int,
    /** What the workflow asked. */
    public val payload: String,
) : RuntimeException(
        "Run '$runId' paused for input at step $position: $payload. Resume it with its answer " +
            "(Workflow.resume(\"$runId\", store, answer); from Java resumeAsync).",
    )

/** A task's attempt outlasted its [TaskPolicy] timeout and was cancelled. */
public class TaskTimeoutException(
    /** The task's name. */
    public val task: String,
    /** The timeout. */
    public val timeout: java.time.Duration,
) : RuntimeException("Task '$task' did not finish within its timeout of $timeout; it was cancelled.")

/**
 * A task's charges took a meter of the run's budget above its limit (`docs/semantics.md` §14): the workflow stops at
 * that task's end, its result recorded (it was paid for), and fails with this.
 */
public class WorkflowBudgetExceededException(
    /** The run. */
    public val runId: String,
    /** The meter. */
    public val meter: String,
    /** The meter's limit in the budget. */
    public val limit: Double,
    /** The run's total of the meter, above [limit]. */
    public val total: Double,
    /** The task whose charges crossed the limit. */
    public val task: String,
) : IllegalStateException(
        "Run '$runId' charged $total to meter '$meter', above its budget's limit of $limit " +
            "(task '$task' crossed it). " +
            "Raise the limit in the budget (WorkflowSettings.withBudget) if this is expected.",
    )
