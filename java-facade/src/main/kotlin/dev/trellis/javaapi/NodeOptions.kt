package dev.trellis.javaapi

import dev.trellis.graph.CachePolicy
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import java.time.Duration
import java.util.Collections
import java.util.Optional

/**
 * Options of one node of a [JavaGraph]: its [retry] policy, its per-attempt [timeout], a [description], and its
 * slice: the keys it [reads] and [writes] (`docs/semantics.md` §12). Immutable; start from a factory and add with
 * the `with...` methods.
 *
 * ```java
 * builder.node("search", ctx -> search(ctx),
 *     NodeOptions.retry(Retry.exponential(3, Duration.ofMillis(200))).withTimeout(Duration.ofSeconds(30)));
 * builder.node("summarize", ctx -> ctx.set(summary, shorten(ctx.get(text))),
 *     NodeOptions.reads(text).withWrites(summary));
 * ```
 */
public class NodeOptions private constructor(
    internal val retryOrNull: Retry?,
    internal val timeoutOrNull: Duration?,
    internal val descriptionOrNull: String?,
    internal val readsOrNull: Set<StateKey<*>>? = null,
    internal val writesOrNull: Set<StateKey<*>>? = null,
    internal val cacheOrNull: CachePolicy? = null,
) {
    /** The node's retry policy; empty for the graph's default. */
    public val retry: Optional<Retry> get() = Optional.ofNullable(retryOrNull)

    /** The node's timeout per attempt; empty for the graph's default. */
    public val timeout: Optional<Duration> get() = Optional.ofNullable(timeoutOrNull)

    /** A description for tools and diagrams; empty for none. */
    public val description: Optional<String> get() = Optional.ofNullable(descriptionOrNull)

    /** The keys the node may read; empty when it declared none (it may read any key). */
    public val reads: Optional<Set<StateKey<*>>> get() = Optional.ofNullable(readsOrNull)

    /** The keys the node may write; empty when it declared none (it may write any key). */
    public val writes: Optional<Set<StateKey<*>>> get() = Optional.ofNullable(writesOrNull)

    /** These options with [retry] (null for the graph's default). */
    public fun withRetry(retry: Retry?): NodeOptions =
        NodeOptions(retry, timeoutOrNull, descriptionOrNull, readsOrNull, writesOrNull, cacheOrNull)

    /**
     * These options with a per-attempt [timeout] (null for the graph's default); an attempt running longer fails
     * with `NodeTimeoutException`. A timeout interrupts a `blockingNode` and cancels an `asyncNode`'s stage; it
     * cannot stop a `node`, which never suspends (like a Kotlin node that does not suspend): code that may be slow
     * belongs in a `blockingNode`.
     */
    public fun withTimeout(timeout: Duration?): NodeOptions =
        NodeOptions(retryOrNull, timeout, descriptionOrNull, readsOrNull, writesOrNull, cacheOrNull)

    /** These options with [description] (null for none). */
    public fun withDescription(description: String?): NodeOptions =
        NodeOptions(retryOrNull, timeoutOrNull, description, readsOrNull, writesOrNull, cacheOrNull)

    /**
     * These options with the node's read slice: the only keys its action may read (`ctx.get`, `ctx.getState()`);
     * any other read fails the node with a `SliceViolationException`. Edge conditions are not restricted.
     */
    public fun withReads(vararg keys: StateKey<*>): NodeOptions = withReads(keys.toSet())

    /** These options with the node's read slice [keys]; null for none declared (any key may be read). */
    public fun withReads(keys: Set<StateKey<*>>?): NodeOptions =
        NodeOptions(retryOrNull, timeoutOrNull, descriptionOrNull, keys?.frozen(), writesOrNull, cacheOrNull)

    /**
     * These options with the node's write slice: the only keys its action may write (`ctx.set`, `ctx.update`); any
     * other write fails the node. `build()` refuses two nodes that start together and both declare a write to a key
     * without a reducer; `Graph.validate()` reports the other pairs that can run in parallel.
     */
    public fun withWrites(vararg keys: StateKey<*>): NodeOptions = withWrites(keys.toSet())

    /** These options with the node's write slice [keys]; null for none declared (any key may be written). */
    public fun withWrites(keys: Set<StateKey<*>>?): NodeOptions =
        NodeOptions(retryOrNull, timeoutOrNull, descriptionOrNull, readsOrNull, keys?.frozen(), cacheOrNull)

    /** The node's result cache (`docs/semantics.md` §13.5); empty when its results are not cached. */
    public val cache: Optional<CachePolicy> get() = Optional.ofNullable(cacheOrNull)

    /**
     * These options with a result cache (null for none): an attempt whose key was stored before and has not expired
     * skips the action and applies the stored writes. The run needs a cache store (`JavaRunOptions.Builder.cache`).
     */
    public fun withCache(cache: CachePolicy?): NodeOptions =
        NodeOptions(retryOrNull, timeoutOrNull, descriptionOrNull, readsOrNull, writesOrNull, cache)

    override fun equals(other: Any?): Boolean =
        this === other ||
            (
                other is NodeOptions && other.retryOrNull == retryOrNull && other.timeoutOrNull == timeoutOrNull &&
                    other.descriptionOrNull == descriptionOrNull && other.readsOrNull == readsOrNull &&
                    other.writesOrNull == writesOrNull && other.cacheOrNull == cacheOrNull
            )

    override fun hashCode(): Int =
        (
            (
                ((retryOrNull?.hashCode() ?: 0) * 31 + (timeoutOrNull?.hashCode() ?: 0)) * 31 +
                    (descriptionOrNull?.hashCode() ?: 0)
            ) *
                31 + (readsOrNull?.hashCode() ?: 0)
        ) * 31 + (writesOrNull?.hashCode() ?: 0) + 31 * (cacheOrNull?.hashCode() ?: 0)

    override fun toString(): String =
        "NodeOptions(retry=$retryOrNull, timeout=$timeoutOrNull, description=$descriptionOrNull" +
            (readsOrNull?.let { keys -> ", reads=${keys.map { it.name }}" } ?: "") +
            (writesOrNull?.let { keys -> ", writes=${keys.map { it.name }}" } ?: "") +
            (cacheOrNull?.let { ", cache=$it" } ?: "") + ")"

    /** Factories. */
    public companion object {
        /** No options: the graph's defaults. */
        @JvmField
        public val DEFAULT: NodeOptions = NodeOptions(null, null, null)

        /** Options with a [retry] policy. */
        @JvmStatic
        public fun retry(retry: Retry): NodeOptions = DEFAULT.withRetry(retry)

        /** Options with a per-attempt [timeout]. */
        @JvmStatic
        public fun timeout(timeout: Duration): NodeOptions = DEFAULT.withTimeout(timeout)

        /** Options with a [description]. */
        @JvmStatic
        public fun description(description: String): NodeOptions = DEFAULT.withDescription(description)

        /** Options with a read slice: the only [keys] the node may read. */
        @JvmStatic
        public fun reads(vararg keys: StateKey<*>): NodeOptions = DEFAULT.withReads(*keys)

        /** Options with a write slice: the only [keys] the node may write. */
        @JvmStatic
        public fun writes(vararg keys: StateKey<*>): NodeOptions = DEFAULT.withWrites(*keys)

        /** Options with a result [cache], e.g. `NodeOptions.cache(CachePolicy.of(s -> s.get(query), Duration.ofHours(1)))`. */
        @JvmStatic
        public fun cache(cache: CachePolicy): NodeOptions = DEFAULT.withCache(cache)
    }
}

private fun Set<StateKey<*>>.frozen(): Set<StateKey<*>> = Collections.unmodifiableSet(LinkedHashSet(this))
