package dev.trellis.javaapi

import dev.trellis.graph.Retry
import java.time.Duration
import java.util.function.Predicate
import kotlin.time.toJavaDuration
import kotlin.time.toKotlinDuration

/**
 * A retry policy for Java callers, with `java.time.Duration`s: how many attempts a node gets, how long to
 * wait between them, and which errors are worth retrying. The Java form of the graph model's `Retry`.
 *
 * Waits are suspensions on the run's clock, never blocked threads.
 *
 * ```java
 * NodeOptions.retry(RetryPolicy.exponential(4, Duration.ofMillis(200)).retryOn(e -> e instanceof IOException))
 * ```
 */
public class RetryPolicy private constructor(private val retry: Retry) {
    /** The total number of attempts, the first included; 1 means no retry. */
    public val maxAttempts: Int get() = retry.maxAttempts

    /** The delay before the second attempt. */
    public val initialDelay: Duration get() = retry.initialDelay.toJavaDuration()

    /** The largest delay between two attempts. */
    public val maxDelay: Duration get() = retry.maxDelay.toJavaDuration()

    /** This policy, retrying only errors for which [predicate] holds. */
    public fun retryOn(predicate: Predicate<Throwable>): RetryPolicy = RetryPolicy(retry.retryOn { predicate.test(it) })

    /** This policy with a random [jitter] fraction (0..1) applied to every delay. */
    public fun withJitter(jitter: Double): RetryPolicy = RetryPolicy(retry.withJitter(jitter))

    /** This policy with delays capped at [maxDelay]. */
    public fun withMaxDelay(
        maxDelay: Duration,
    ): RetryPolicy = RetryPolicy(retry.withMaxDelay(maxDelay.toKotlinDuration()))

    /** The graph model's `Retry` this policy stands for. */
    public fun toRetry(): Retry = retry

    override fun equals(other: Any?): Boolean = this === other || (other is RetryPolicy && other.retry == retry)

    override fun hashCode(): Int = retry.hashCode()

    override fun toString(): String = retry.toString()

    /** Factories. */
    public companion object {
        /** No retry: one attempt. */
        @JvmField
        public val NONE: RetryPolicy = RetryPolicy(Retry.NONE)

        /** [maxAttempts] attempts, [delay] apart. */
        @JvmStatic
        public fun fixed(
            maxAttempts: Int,
            delay: Duration,
        ): RetryPolicy = RetryPolicy(Retry.fixed(maxAttempts, delay.toKotlinDuration()))

        /** [maxAttempts] attempts, waiting `initialDelay * n` after the n-th failure, at most [maxDelay]. */
        @JvmStatic
        public fun linear(maxAttempts: Int, initialDelay: Duration, maxDelay: Duration): RetryPolicy =
            RetryPolicy(Retry.linear(maxAttempts, initialDelay.toKotlinDuration(), maxDelay.toKotlinDuration()))

        /** [maxAttempts] attempts, delays doubling from [initialDelay] up to 30 seconds. */
        @JvmStatic
        public fun exponential(maxAttempts: Int, initialDelay: Duration): RetryPolicy =
            RetryPolicy(Retry.exponential(maxAttempts, initialDelay.toKotlinDuration()))

        /** [maxAttempts] attempts, delays growing by [multiplier] from [initialDelay] up to [maxDelay]. */
        @JvmStatic
        public fun exponential(
            maxAttempts: Int,
            initialDelay: Duration,
            multiplier: Double,
            maxDelay: Duration,
        ): RetryPolicy =
            RetryPolicy(
                Retry.exponential(
                    maxAttempts,
                    initialDelay.toKotlinDuration(),
                    multiplier,
                    maxDelay.toKotlinDuration(),
                ),
            )

        /** The policy standing for a graph model [retry]. */
        @JvmStatic
        public fun of(retry: Retry): RetryPolicy = RetryPolicy(retry)
    }
}
