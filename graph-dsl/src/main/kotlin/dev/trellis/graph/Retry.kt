package dev.trellis.graph

import kotlin.math.pow
import kotlin.random.Random
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.toJavaDuration
import kotlin.time.toKotlinDuration

/**
 * A retry policy, as a value: how many attempts a node gets, how long to wait between them, and which
 * errors are worth retrying.
 *
 * Delays are suspending waits on the coroutine clock (virtual time in tests), never blocked threads.
 *
 * ```kotlin
 * node("search", retry = Retry.exponential(maxAttempts = 4, initialDelay = 200.milliseconds).retryOn { it is IOException })
 * ```
 *
 * Java uses the same class, with `java.time.Duration`s:
 *
 * ```java
 * NodeOptions.retry(Retry.exponential(4, Duration.ofMillis(200)).retryOn(e -> e instanceof IOException))
 * ```
 */
public class Retry private constructor(
    /** The total number of attempts, the first included; 1 means no retry. */
    public val maxAttempts: Int,
    /** How the delay grows between attempts. */
    public val backoff: Backoff,
    /** The delay before the second attempt. */
    @get:JvmSynthetic
    public val initialDelay: Duration,
    /** The largest delay between two attempts. */
    @get:JvmSynthetic
    public val maxDelay: Duration,
    /** The growth factor of exponential backoff. */
    public val multiplier: Double,
    /** The fraction (0..1) by which each delay is randomly shortened or lengthened. */
    public val jitter: Double,
    private val predicate: (Throwable) -> Boolean,
) {
    init {
        require(maxAttempts >= 1) { "Retry.maxAttempts must be at least 1 (1 = no retry), but was $maxAttempts." }
        require(!initialDelay.isNegative()) { "Retry.initialDelay must not be negative, but was $initialDelay." }
        require(
            maxDelay >= initialDelay,
        ) { "Retry.maxDelay ($maxDelay) must be at least initialDelay ($initialDelay)." }
        require(multiplier >= 1.0) { "Retry.multiplier must be at least 1.0, but was $multiplier." }
        require(jitter in 0.0..1.0) { "Retry.jitter must be between 0.0 and 1.0, but was $jitter." }
    }

    /** How delays grow between attempts. */
    public enum class Backoff {
        /** The same delay every time. */
        FIXED,

        /** `initialDelay * n` before attempt `n + 1`. */
        LINEAR,

        /** `initialDelay * multiplier^(n-1)` before attempt `n + 1`. */
        EXPONENTIAL,
    }

    /** [initialDelay] as a `java.time.Duration`: `getInitialDelay()` in Java. */
    @get:JvmName("getInitialDelay")
    public val javaInitialDelay: java.time.Duration get() = initialDelay.toJavaDuration()

    /** [maxDelay] as a `java.time.Duration`: `getMaxDelay()` in Java. */
    @get:JvmName("getMaxDelay")
    public val javaMaxDelay: java.time.Duration get() = maxDelay.toJavaDuration()

    /** Whether [error], thrown by attempt [attempt], should be followed by another attempt. */
    public fun shouldRetry(error: Throwable, attempt: Int): Boolean = attempt < maxAttempts && predicate(error)

    /** The delay before attempt [nextAttempt] (2 for the first retry), with jitter drawn from [random]. */
    @JvmSynthetic
    public fun delayBefore(nextAttempt: Int, random: Random): Duration {
        val n = (nextAttempt - 1).coerceAtLeast(1)
        val base = when (backoff) {
            Backoff.FIXED -> initialDelay
            Backoff.LINEAR -> initialDelay * n
            Backoff.EXPONENTIAL -> initialDelay * multiplier.pow(n - 1)
        }.coerceAtMost(maxDelay)
        if (jitter == 0.0 || base == Duration.ZERO) return base
        val factor = 1.0 + jitter * (2 * random.nextDouble() - 1)
        return (base * factor).coerceAtMost(maxDelay)
    }

    /** This policy, retrying only errors for which [predicate] returns true. */
    public fun retryOn(predicate: (Throwable) -> Boolean): Retry =
        Retry(maxAttempts, backoff, initialDelay, maxDelay, multiplier, jitter, predicate)

    /** This policy with a random [jitter] fraction (0..1) applied to every delay. */
    public fun withJitter(jitter: Double): Retry =
        Retry(maxAttempts, backoff, initialDelay, maxDelay, multiplier, jitter, predicate)

    /** This policy with delays capped at [maxDelay]. */
    @JvmSynthetic
    public fun withMaxDelay(maxDelay: Duration): Retry =
        Retry(maxAttempts, backoff, initialDelay, maxDelay, multiplier, jitter, predicate)

    /** This policy with delays capped at [maxDelay], from Java. */
    public fun withMaxDelay(maxDelay: java.time.Duration): Retry = withMaxDelay(maxDelay.toKotlinDuration())

    override fun toString(): String =
        "Retry($backoff, maxAttempts=$maxAttempts, initialDelay=$initialDelay, maxDelay=$maxDelay, " +
            "multiplier=$multiplier, jitter=$jitter)"

    /** Factories of retry policies. */
    public companion object {
        private val all: (Throwable) -> Boolean = { true }

        /** No retry: one attempt. */
        @JvmField
        public val NONE: Retry = Retry(1, Backoff.FIXED, Duration.ZERO, Duration.ZERO, 1.0, 0.0, all)

        /** [maxAttempts] attempts, [delay] apart. */
        @JvmSynthetic
        public fun fixed(maxAttempts: Int, delay: Duration = 100.milliseconds): Retry =
            Retry(maxAttempts, Backoff.FIXED, delay, delay, 1.0, 0.0, all)

        /** [maxAttempts] attempts, waiting `initialDelay * n` after the n-th failure, at most [maxDelay]. */
        @JvmSynthetic
        public fun linear(
            maxAttempts: Int,
            initialDelay: Duration = 100.milliseconds,
            maxDelay: Duration = 30.seconds,
        ): Retry =
            Retry(maxAttempts, Backoff.LINEAR, initialDelay, maxDelay.coerceAtLeast(initialDelay), 1.0, 0.0, all)

        /** [maxAttempts] attempts, delays growing by [multiplier] from [initialDelay] up to [maxDelay]. */
        @JvmSynthetic
        public fun exponential(
            maxAttempts: Int = 3,
            initialDelay: Duration = 100.milliseconds,
            multiplier: Double = 2.0,
            maxDelay: Duration = 30.seconds,
        ): Retry = Retry(
            maxAttempts,
            Backoff.EXPONENTIAL,
            initialDelay,
            maxDelay.coerceAtLeast(initialDelay),
            multiplier,
            0.0,
            all,
        )

        /** [maxAttempts] attempts, [delay] apart (Java). */
        @JvmStatic
        public fun fixed(
            maxAttempts: Int,
            delay: java.time.Duration,
        ): Retry = fixed(maxAttempts, delay.toKotlinDuration())

        /** [maxAttempts] attempts, waiting `initialDelay * n` after the n-th failure, at most [maxDelay] (Java). */
        @JvmStatic
        public fun linear(maxAttempts: Int, initialDelay: java.time.Duration, maxDelay: java.time.Duration): Retry =
            linear(maxAttempts, initialDelay.toKotlinDuration(), maxDelay.toKotlinDuration())

        /** [maxAttempts] attempts, delays doubling from [initialDelay] up to 30 seconds (Java). */
        @JvmStatic
        public fun exponential(maxAttempts: Int, initialDelay: java.time.Duration): Retry =
            exponential(maxAttempts, initialDelay.toKotlinDuration())

        /** [maxAttempts] attempts, delays growing by [multiplier] from [initialDelay] up to [maxDelay] (Java). */
        @JvmStatic
        public fun exponential(
            maxAttempts: Int,
            initialDelay: java.time.Duration,
            multiplier: Double,
            maxDelay: java.time.Duration,
        ): Retry = exponential(maxAttempts, initialDelay.toKotlinDuration(), multiplier, maxDelay.toKotlinDuration())
    }
}
