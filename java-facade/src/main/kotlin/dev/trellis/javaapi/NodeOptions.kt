package dev.trellis.javaapi

import java.time.Duration

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
    /** The node's retry policy, or null for the graph's default. */
    public val retry: RetryPolicy?,
    /** The node's timeout per attempt, or null for the graph's default. */
    public val timeout: Duration?,
    /** A description for tools and diagrams, or null. */
    public val description: String?,
) {
    /** These options with [retry]. */
    public fun withRetry(retry: RetryPolicy?): NodeOptions = NodeOptions(retry, timeout, description)

    /** These options with a per-attempt [timeout]; an attempt running longer fails with `NodeTimeoutException`. */
    public fun withTimeout(timeout: Duration?): NodeOptions = NodeOptions(retry, timeout, description)

    /** These options with [description]. */
    public fun withDescription(description: String?): NodeOptions = NodeOptions(retry, timeout, description)

    override fun equals(other: Any?): Boolean =
        this === other || (other is NodeOptions && other.retry == retry && other.timeout == timeout && other.description == description)

    override fun hashCode(): Int = ((retry?.hashCode() ?: 0) * 31 + (timeout?.hashCode() ?: 0)) * 31 + (description?.hashCode() ?: 0)

    override fun toString(): String = "NodeOptions(retry=$retry, timeout=$timeout, description=$description)"

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
