package dev.trellis.javaapi

import java.time.Duration
import java.util.Optional

/**
 * Options of one node of a [JavaGraph]: its [retry] policy, its per-attempt [timeout] and a [description].
 * Immutable; start from a factory and add with the `with...` methods.
 *
 * ```java
 * builder.node("search", ctx -> search(ctx),
 *     NodeOptions.retry(RetryPolicy.exponential(3, Duration.ofMillis(200))).withTimeout(Duration.ofSeconds(30)));
 * ```
 */
public class NodeOptions private constructor(
    internal val retryOrNull: RetryPolicy?,
    internal val timeoutOrNull: Duration?,
    internal val descriptionOrNull: String?,
) {
    /** The node's retry policy; empty for the graph's default. */
    public val retry: Optional<RetryPolicy> get() = Optional.ofNullable(retryOrNull)

    /** The node's timeout per attempt; empty for the graph's default. */
    public val timeout: Optional<Duration> get() = Optional.ofNullable(timeoutOrNull)

    /** A description for tools and diagrams; empty for none. */
    public val description: Optional<String> get() = Optional.ofNullable(descriptionOrNull)

    /** These options with [retry] (null for the graph's default). */
    public fun withRetry(retry: RetryPolicy?): NodeOptions = NodeOptions(retry, timeoutOrNull, descriptionOrNull)

    /**
     * These options with a per-attempt [timeout] (null for the graph's default); an attempt running longer fails
     * with `NodeTimeoutException`. A timeout interrupts a `blockingNode` and cancels an `asyncNode`'s stage; it
     * cannot stop a `node`, which never suspends (like a Kotlin node that does not suspend): code that may be slow
     * belongs in a `blockingNode`.
     */
    public fun withTimeout(timeout: Duration?): NodeOptions = NodeOptions(retryOrNull, timeout, descriptionOrNull)

    /** These options with [description] (null for none). */
    public fun withDescription(description: String?): NodeOptions = NodeOptions(retryOrNull, timeoutOrNull, description)

    override fun equals(other: Any?): Boolean =
        this === other ||
            (
                other is NodeOptions && other.retryOrNull == retryOrNull && other.timeoutOrNull == timeoutOrNull &&
                    other.descriptionOrNull == descriptionOrNull
            )

    override fun hashCode(): Int =
        ((retryOrNull?.hashCode() ?: 0) * 31 + (timeoutOrNull?.hashCode() ?: 0)) * 31 +
            (descriptionOrNull?.hashCode() ?: 0)

    override fun toString(): String =
        "NodeOptions(retry=$retryOrNull, timeout=$timeoutOrNull, description=$descriptionOrNull)"

    /** Factories. */
    public companion object {
        /** No options: the graph's defaults. */
        @JvmField
        public val DEFAULT: NodeOptions = NodeOptions(null, null, null)

        /** Options with a [retry] policy. */
        @JvmStatic
        public fun retry(retry: RetryPolicy): NodeOptions = DEFAULT.withRetry(retry)

        /** Options with a per-attempt [timeout]. */
        @JvmStatic
        public fun timeout(timeout: Duration): NodeOptions = DEFAULT.withTimeout(timeout)

        /** Options with a [description]. */
        @JvmStatic
        public fun description(description: String): NodeOptions = DEFAULT.withDescription(description)
    }
}
