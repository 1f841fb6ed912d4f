package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.InternalStoreApi
import dev.trellis.checkpoint.NodeCache
import dev.trellis.checkpoint.NodeCacheKey
import java.time.Instant

/**
 * The [NodeCache] in SQL, shared by the SQLite and PostgreSQL caches: one row per entry in the engine's
 * [JdbcEngine.nodeCacheTable], in the checkpoints' database, keyed by graph, graph version, node and the SHA-256 of
 * the node's key. A store is an upsert (`INSERT … ON CONFLICT … DO UPDATE`, which both databases understand), so
 * concurrent stores of one key leave the last one. The public caches delegate to it.
 */
@InternalStoreApi
public class JdbcNodeCache(private val engine: JdbcEngine) : NodeCache {
    private val table = engine.nodeCacheTable

    override suspend fun get(key: NodeCacheKey, now: Instant): String? = engine.transaction { c ->
        c.prepareStatement(
            "SELECT value, expires_at FROM $table WHERE graph_id = ? AND graph_version = ? AND node_id = ? AND key_hash = ?",
        ).use { statement ->
            statement.bindKey(key)
            statement.executeQuery().use { rs ->
                if (!rs.next()) return@transaction null
                val value = rs.getString(1)
                val expires = rs.getLong(2)
                if (!rs.wasNull() && expires <= now.toEpochMilli()) null else value
            }
        }
    }

    override suspend fun put(key: NodeCacheKey, value: String, expiresAt: Instant?) {
        engine.transaction { c ->
            c.prepareStatement(
                "INSERT INTO $table (graph_id, graph_version, node_id, key_hash, value, stored_at, expires_at) " +
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (graph_id, graph_version, node_id, key_hash) " +
                    "DO UPDATE SET value = excluded.value, stored_at = excluded.stored_at, " +
                    "expires_at = excluded.expires_at",
            ).use { statement ->
                statement.bindKey(key)
                statement.setString(5, value)
                statement.setLong(6, System.currentTimeMillis())
                if (expiresAt == null) {
                    statement.setNull(7, java.sql.Types.BIGINT)
                } else {
                    statement.setLong(7, expiresAt.toEpochMilli())
                }
                statement.executeUpdate()
            }
        }
    }

    override suspend fun removeExpired(now: Instant): Int = engine.transaction { c ->
        c.prepareStatement("DELETE FROM $table WHERE expires_at <= ?").use {
            it.setLong(1, now.toEpochMilli())
            it.executeUpdate()
        }
    }

    override fun close() {
        engine.close()
    }

    private fun java.sql.PreparedStatement.bindKey(key: NodeCacheKey) {
        setString(1, key.graphId)
        setInt(2, key.graphVersion)
        setString(3, key.nodeId)
        setString(4, key.keyHash)
    }
}
