package dev.trellis.checkpoint

import java.time.Instant

/**
 * Where the results of cached nodes are kept (`docs/semantics.md` §13.5): [InMemoryNodeCache], `SqliteNodeCache`,
 * `PostgresNodeCache`. A run uses one through `RunOptions(cache = …)`; nodes opt in with a `CachePolicy`.
 *
 * The runtime hands the store opaque JSON text per entry (the node's writes, encoded with the state keys'
 * serializers); the store never reads it. Times are kept to the millisecond. A store is safe to share between runs,
 * coroutines and threads; stores on one database (several JVMs) see each other's entries.
 */
public interface NodeCache : AutoCloseable {
    /** The value stored under [key], or null when there is none or it expired (its expiry is not after [now]). */
    public suspend fun get(key: NodeCacheKey, now: Instant): String?

    /** Stores [value] under [key], replacing any entry there; it expires at [expiresAt] (never when null). */
    public suspend fun put(key: NodeCacheKey, value: String, expiresAt: Instant?)

    /** Deletes the entries that expired by [now] and returns how many there were. */
    public suspend fun removeExpired(now: Instant): Int

    /** Releases the store's resources (connections); a store that holds none does nothing. */
    override fun close() {}
}

/**
 * The key of one cache entry: the graph ([graphId], [graphVersion] — its schema's version), the node ([nodeId]) and
 * the node's own [key] (what its `CachePolicy` computed from the node's input). Two nodes never share entries.
 */
public class NodeCacheKey(
    /** The id of the graph the node belongs to. */
    public val graphId: String,
    /** The version of the graph's state schema. */
    public val graphVersion: Int,
    /** The node's id in its graph. */
    public val nodeId: String,
    /** The key the node's cache policy computed from its input. */
    public val key: String,
) {
    /** The SHA-256 of [key] in hexadecimal: what the SQL stores index (a key may be long). */
    public val keyHash: String by lazy {
        val digest = java.security.MessageDigest.getInstance("SHA-256").digest(key.toByteArray(Charsets.UTF_8))
        digest.joinToString("") { "%02x".format(it) }
    }

    override fun equals(other: Any?): Boolean =
        this === other ||
            (
                other is NodeCacheKey && other.graphId == graphId && other.graphVersion == graphVersion &&
                    other.nodeId == nodeId && other.key == key
            )

    override fun hashCode(): Int =
        ((graphId.hashCode() * 31 + graphVersion) * 31 + nodeId.hashCode()) * 31 + key.hashCode()

    override fun toString(): String = "NodeCacheKey($graphId v$graphVersion, $nodeId, ${key.take(64)})"
}
