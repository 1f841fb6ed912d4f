package dev.trellis.javaapi

import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import dev.trellis.graph.TaskError
import dev.trellis.graph.TaskFailure
import java.time.Duration
import java.util.Optional

/**
 * Options of a map node of a [JavaGraph] (`docs/semantics.md` §11): how many tasks run at once ([maxConcurrency]),
 * what a failed task does ([taskFailure], and the [errors] key it is collected into), and each task's [retry]
 * policy, per-attempt [timeout] and the node's [description]. Immutable; start from a factory and add with the
 * `with...` methods.
 *
 * ```java
 * MapOptions.maxConcurrency(8)
 *     .withTaskFailure(TaskFailure.COLLECT).withErrors(errors)   // errors: Keys.taskErrors(schema, "errors")
 *     .withRetry(Retry.exponential(3, Duration.ofMillis(200)))
 * ```
 */
public class MapOptions private constructor(
    /** The most tasks of one execution running at once; `Integer.MAX_VALUE` (the default) for all of them. */
    public val maxConcurrency: Int,
    /** What a task that fails after its retries does: fail the map (`FAIL_FAST`, the default) or `COLLECT`. */
    public val taskFailure: TaskFailure,
    internal val errorsOrNull: StateKey<List<TaskError>>?,
    internal val retryOrNull: Retry?,
    internal val timeoutOrNull: Duration?,
    internal val descriptionOrNull: String?,
) {
    /** The key the failures of collected tasks are written to, in task order; empty for none. */
    public val errors: Optional<StateKey<List<TaskError>>> get() = Optional.ofNullable(errorsOrNull)

    /** Each task's retry policy; empty for the graph's default. */
    public val retry: Optional<Retry> get() = Optional.ofNullable(retryOrNull)

    /** Each task's timeout per attempt; empty for the graph's default. */
    public val timeout: Optional<Duration> get() = Optional.ofNullable(timeoutOrNull)

    /** A description for tools and diagrams; empty for none. */
    public val description: Optional<String> get() = Optional.ofNullable(descriptionOrNull)

    /** These options with at most [maxConcurrency] tasks running at once (1 runs them one after another). */
    public fun withMaxConcurrency(maxConcurrency: Int): MapOptions =
        MapOptions(maxConcurrency, taskFailure, errorsOrNull, retryOrNull, timeoutOrNull, descriptionOrNull)

    /**
     * These options with [taskFailure]: `FAIL_FAST` cancels the running tasks and fails the map with the first
     * failed task's error; `COLLECT` lets the others go on, the failed ones writing nothing (see [withErrors]).
     */
    public fun withTaskFailure(taskFailure: TaskFailure): MapOptions =
        MapOptions(maxConcurrency, taskFailure, errorsOrNull, retryOrNull, timeoutOrNull, descriptionOrNull)

    /**
     * These options with the key the failures of collected tasks are written to (null for none); needs
     * `withTaskFailure(TaskFailure.COLLECT)`. Declare it with [Keys.taskErrors].
     */
    public fun withErrors(errors: StateKey<List<TaskError>>?): MapOptions =
        MapOptions(maxConcurrency, taskFailure, errors, retryOrNull, timeoutOrNull, descriptionOrNull)

    /** These options with each task's [retry] policy (null for the graph's default). */
    public fun withRetry(retry: Retry?): MapOptions =
        MapOptions(maxConcurrency, taskFailure, errorsOrNull, retry, timeoutOrNull, descriptionOrNull)

    /**
     * These options with each task attempt's [timeout] (null for the graph's default); a task attempt running
     * longer fails with `NodeTimeoutException`. As for nodes, it interrupts a `blockingMap` task and cancels a
     * subgraph task's child run, but cannot stop an inline `map` task, which never suspends.
     */
    public fun withTimeout(timeout: Duration?): MapOptions =
        MapOptions(maxConcurrency, taskFailure, errorsOrNull, retryOrNull, timeout, descriptionOrNull)

    /** These options with [description] (null for none). */
    public fun withDescription(description: String?): MapOptions =
        MapOptions(maxConcurrency, taskFailure, errorsOrNull, retryOrNull, timeoutOrNull, description)

    override fun equals(other: Any?): Boolean =
        this === other ||
            (
                other is MapOptions && other.maxConcurrency == maxConcurrency && other.taskFailure == taskFailure &&
                    other.errorsOrNull == errorsOrNull && other.retryOrNull == retryOrNull &&
                    other.timeoutOrNull == timeoutOrNull && other.descriptionOrNull == descriptionOrNull
            )

    override fun hashCode(): Int =
        listOf(maxConcurrency, taskFailure, errorsOrNull, retryOrNull, timeoutOrNull, descriptionOrNull).hashCode()

    override fun toString(): String =
        "MapOptions(maxConcurrency=$maxConcurrency, taskFailure=$taskFailure, errors=${errorsOrNull?.name}, " +
            "retry=$retryOrNull, timeout=$timeoutOrNull, description=$descriptionOrNull)"

    /** Factories. */
    public companion object {
        /** No options: every task at once, fail fast, the graph's defaults. */
        @JvmField
        public val DEFAULT: MapOptions = MapOptions(Int.MAX_VALUE, TaskFailure.FAIL_FAST, null, null, null, null)

        /** Options with at most [maxConcurrency] tasks running at once. */
        @JvmStatic
        public fun maxConcurrency(maxConcurrency: Int): MapOptions = DEFAULT.withMaxConcurrency(maxConcurrency)

        /** Options that collect failed tasks into [errors] (`TaskFailure.COLLECT`) instead of failing the map. */
        @JvmStatic
        public fun collectErrors(errors: StateKey<List<TaskError>>): MapOptions =
            DEFAULT.withTaskFailure(TaskFailure.COLLECT).withErrors(errors)
    }
}
