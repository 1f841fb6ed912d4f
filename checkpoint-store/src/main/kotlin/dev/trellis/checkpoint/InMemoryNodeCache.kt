package dev.trellis.checkpoint

import java.time.Instant

/**
 * A [NodeCache] in this JVM's memory (`docs/semantics.md` §13.5): entries live as long as the store object.
 *
 * It keeps at most [maxEntries] entries; storing one more forgets the entry stored or read least recently. It counts
 * its [hits], [misses] and [stores], for tests and dashboards. Safe to share between runs and threads.
 *
 * ```kotlin
 * val cache = InMemoryNodeCache()
 * graph.invoke(input, RunOptions(cache = cache))
 * ```
 */
public class InMemoryNodeCache @JvmOverloads constructor(
    /** The most entries kept; the least recently used one is forgotten first. */
    public val maxEntries: Int = DEFAULT_MAX_ENTRIES,
) : NodeCache {
    private class Entry(val value: String, val expiresAtMillis: Long?)

    private val entries = object : LinkedHashMap<NodeCacheKey, Entry>(16, 0.75f, true) {
        override fun removeEldestEntry(eldest: MutableMap.MutableEntry<NodeCacheKey, Entry>?): Boolean =
            size > maxEntries
    }

    private var hitCount = 0L
    private var missCount = 0L
    private var storeCount = 0L

    init {
        require(maxEntries >= 1) { "maxEntries must be at least 1, but was $maxEntries." }
    }

    /** How many lookups found a live entry. */
    public val hits: Long get() = synchronized(entries) { hitCount }

    /** How many lookups found none (or an expired one). */
    public val misses: Long get() = synchronized(entries) { missCount }

    /** How many entries were stored. */
    public val stores: Long get() = synchronized(entries) { storeCount }

    /** How many entries are kept, expired ones included until [removeExpired] or a lookup drops them. */
    public val size: Int get() = synchronized(entries) { entries.size }

    override suspend fun get(key: NodeCacheKey, now: Instant): String? = synchronized(entries) {
        val entry = entries[key]
        if (entry == null) {
            missCount++
            return null
        }
        val expires = entry.expiresAtMillis
        if (expires != null && expires <= now.toEpochMilli()) {
            entries.remove(key)
            missCount++
            return null
        }
        hitCount++
        entry.value
    }

    override suspend fun put(key: NodeCacheKey, value: String, expiresAt: Instant?) {
        synchronized(entries) {
            entries[key] = Entry(value, expiresAt?.toEpochMilli())
            storeCount++
        }
    }

    override suspend fun removeExpired(now: Instant): Int = synchronized(entries) {
        val millis = now.toEpochMilli()
        val before = entries.size
        entries.values.removeIf { e -> e.expiresAtMillis?.let { it <= millis } == true }
        before - entries.size
    }

    /** Forgets every entry (the counters stay). */
    public fun clear() {
        synchronized(entries) { entries.clear() }
    }

    override fun toString(): String = "InMemoryNodeCache($size entries)"

    /** Defaults. */
    public companion object {
        /** The default of [maxEntries]. */
        public const val DEFAULT_MAX_ENTRIES: Int = 10_000
    }
}
