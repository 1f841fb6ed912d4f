package dev.trellis.graph

import kotlin.time.Duration
import kotlin.time.toKotlinDuration

/**
 * Caches a node's results (`docs/semantics.md` §13.5): an attempt whose [key] was stored before, and has not
 * expired, skips the body and applies the stored writes exactly as if the body had made them.
 *
 * The [key] sees the node's input (its read slice, §12) and returns a `String` that must be the same for inputs the
 * body treats alike; the run's cache store (`RunOptions.cache`) keeps the entries under the graph's id and schema
 * version, the node's id and this key. Entries expire [ttl] after they were stored, by the run's clock; a null
 * [ttl] never expires.
 *
 * ```kotlin
 * node("search", cache = CachePolicy(key = { input -> input[Research.question] }, ttl = 1.hours)) { … }
 * ```
 */
public class CachePolicy(
    /** Computes the entry's key from the node's input. */
    public val key: CacheKey,
    /** How long an entry stays valid after it was stored; null for ever. */
    @get:JvmSynthetic
    public val ttl: Duration? = null,
) {
    init {
        require(ttl == null || ttl.isPositive()) {
            "A cache policy's ttl must be positive, but was $ttl; pass null for entries that never expire."
        }
    }

    override fun toString(): String = "CachePolicy(ttl=$ttl)"

    /** Factories for Java. */
    public companion object {
        /** A policy keyed by [key] whose entries expire [ttl] after they were stored (never when null). */
        @JvmStatic
        public fun of(key: CacheKey, ttl: java.time.Duration?): CachePolicy = CachePolicy(key, ttl?.toKotlinDuration())

        /** A policy keyed by [key] whose entries never expire. */
        @JvmStatic
        public fun of(key: CacheKey): CachePolicy = CachePolicy(key, null)
    }
}

/** Computes a cache entry's key from a node's input state (see [CachePolicy]). */
public fun interface CacheKey {
    /** The key of [input], the node's input state. */
    public fun of(input: State): String
}
