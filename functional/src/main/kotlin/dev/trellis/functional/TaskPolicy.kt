package dev.trellis.functional

import dev.trellis.graph.Retry
import kotlin.time.Duration
import kotlin.time.Duration.Companion.nanoseconds
import kotlin.time.toKotlinDuration

/**
 * How a task runs (`docs/semantics.md` §14): its [retry] policy (the same [Retry] as a node's) and the [timeout] of
 * each attempt. A task whose attempt fails is tried again while the policy allows, after the policy's delay; an
 * attempt that outlasts the timeout is cancelled and fails with [TaskTimeoutException] (which the policy may retry).
 * Only the result of the attempt that succeeded is recorded; a task that gives up fails the workflow.
 *
 * ```kotlin
 * val policy = TaskPolicy.DEFAULT.withRetry(Retry.fixed(3, 10.milliseconds)).withTimeout(5.seconds)
 * ```
 *
 * From Java: `TaskPolicy.DEFAULT.withRetries(3, Duration.ofMillis(10)).withTimeout(Duration.ofSeconds(5))`.
 */
public class TaskPolicy private constructor(
    /** The retry policy of the task's attempts; [Retry.NONE] (one attempt) by default. */
    public val retry: Retry,
    private val timeoutNanos: Long?,
) {
    /** The deadline of each attempt, or null for none. */
    @get:JvmSynthetic
    public val timeout: Duration? get() = timeoutNanos?.nanoseconds

    /** The deadline of each attempt, or null for none (Java). */
    public val attemptTimeout: java.time.Duration? get() = timeoutNanos?.let { java.time.Duration.ofNanos(it) }

    /** This policy with [retry] as its retry policy. */
    public fun withRetry(retry: Retry): TaskPolicy = TaskPolicy(retry, timeoutNanos)

    /**
     * This policy retrying up to [maxAttempts] attempts in all, [delay] apart (a fixed backoff without jitter):
     * the Java way to [withRetry] `Retry.fixed`.
     */
    public fun withRetries(maxAttempts: Int, delay: java.time.Duration): TaskPolicy {
        require(maxAttempts >= 1) { "maxAttempts must be at least 1 (one attempt, no retry), but was $maxAttempts." }
        return withRetry(Retry.fixed(maxAttempts, delay.toKotlinDuration()).withJitter(0.0))
    }

    /** This policy with a deadline of [timeout] on each attempt. */
    @JvmSynthetic
    public fun withTimeout(timeout: Duration): TaskPolicy {
        require(timeout.isPositive()) { "A task's timeout must be positive, but was $timeout." }
        return TaskPolicy(retry, timeout.inWholeNanoseconds)
    }

    /** This policy with a deadline of [timeout] on each attempt (Java). */
    public fun withTimeout(timeout: java.time.Duration): TaskPolicy = withTimeout(timeout.toKotlinDuration())

    override fun toString(): String = "TaskPolicy(retry=$retry, timeout=$timeout)"

    /** The default policy. */
    public companion object {
        /** One attempt, no deadline. */
        @JvmField
        public val DEFAULT: TaskPolicy = TaskPolicy(Retry.NONE, null)
    }
}
