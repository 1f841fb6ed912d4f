package dev.trellis.runtime.internal.policies

import dev.trellis.checkpoint.NodeCache
import dev.trellis.checkpoint.NodeCacheKey
import dev.trellis.graph.CachePolicy
import dev.trellis.graph.Graph
import dev.trellis.graph.Node
import dev.trellis.graph.NodeChain
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeWrites
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.internal.checkpoint.PersistenceJson
import dev.trellis.runtime.internal.checkpoint.PositionCodec
import dev.trellis.runtime.internal.events.eventHead
import dev.trellis.runtime.internal.execution.Link
import dev.trellis.runtime.internal.rethrowIfFatal
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlin.time.toJavaDuration

/*
 * The node result cache (`docs/semantics.md` §13.5), built on interceptors: a cached node gets a [CacheInterceptor]
 * as its innermost interceptor. Graphs without cached nodes never reach this file.
 */

/** The run's cache store, or a failure naming [node] and the fix when the run has none. */
internal fun requireCache(graph: Graph, node: Node, options: RunOptions): NodeCache =
    requireNotNull(options.cache) {
        "Node '${node.id}' of graph '${graph.id}' has a cache policy, but the run has no cache store; pass one: " +
            "RunOptions(cache = InMemoryNodeCache()) (or SqliteNodeCache / PostgresNodeCache to keep entries across " +
            "processes; Java: JavaRunOptions.builder().cache(...)), or remove the node's cache policy."
    }

/**
 * Looks each attempt of [node] up in [cache] under its policy's key; a hit returns the cached writes without
 * proceeding, a miss proceeds and stores what the body wrote.
 */
internal class CacheInterceptor(
    private val graph: Graph,
    private val node: Node,
    private val policy: CachePolicy,
    private val cache: NodeCache,
) : NodeInterceptor {
    override suspend fun intercept(chain: NodeChain): NodeWrites {
        val scope = (chain as Link).scope
        val execution = scope.execution
        val engine = execution.engine
        // Resuming an interrupt: the writes depend on an answer the key does not see.
        if (engine.answers.hasUnder(execution.path)) return chain.proceed()
        val key: String? = policy.key.of(chain.state)
        key ?: throw NullPointerException(
            "The cache policy of node '${node.id}' computed a null key; return a String from its key function.",
        )
        val entry = NodeCacheKey(graph.id, graph.schema.version, node.id, key)
        val cached = cache.get(entry, engine.now())?.let { CachedWrites.decode(graph.schema, it) }
        if (cached != null) {
            scope.sendNodeEvent { seq ->
                RunEvent.NodeCacheHit(execution.eventHead(seq, engine.now()), chain.attempt, key)
            }
            return cached
        }
        val writes = chain.proceed()
        // A slice violation the body caught fails the attempt; an abandoned attempt (timed out) stores nothing.
        if (scope.violation != null) return writes
        currentCoroutineContext().ensureActive()
        val text = CachedWrites.encode(node.id, writes)
        val expiresAt = policy.ttl?.let { engine.now().plus(it.toJavaDuration()) }
        cache.put(entry, text, expiresAt)
        scope.sendNodeEvent { seq ->
            RunEvent.NodeCacheStored(execution.eventHead(seq, engine.now()), chain.attempt, key, expiresAt)
        }
        return writes
    }

    override fun toString(): String = "CacheInterceptor(${node.id}, $policy)"
}

/**
 * A node's writes as cache entry text: `{"format":1,"writes":[{"key":"notes","value":…},…]}`, each value written by
 * its key's serializer (the checkpoints' codec).
 */
internal object CachedWrites {
    private const val FORMAT = 1

    /** [writes] as text; every value is read back, so an entry always decodes to values of its keys' types. */
    fun encode(nodeId: String, writes: NodeWrites): String {
        val entries = ArrayList<JsonObject>(writes.size)
        for (i in 0 until writes.size) {
            val key = writes.keyAt(i)
            val value = writes.valueAt(i)
            val json = try {
                PositionCodec.encodeValue(key, value)
            } catch (e: Throwable) {
                e.rethrowIfFatal(null)
                throw uncacheable(nodeId, key, "its serializer cannot write it (${(e.cause ?: e).message})", e)
            }
            val back = try {
                @Suppress("UNCHECKED_CAST")
                PersistenceJson.decodeFromJsonElement(key.serializer as KSerializer<Any?>, json)
            } catch (e: Throwable) {
                e.rethrowIfFatal(null)
                throw uncacheable(nodeId, key, "it was written as $json but cannot be read back (${e.message})", e)
            }
            if (!key.accepts(back)) {
                throw uncacheable(
                    nodeId,
                    key,
                    "it was written as $json but reads back as ${back?.javaClass?.name ?: "null"}",
                    null,
                )
            }
            entries += JsonObject(mapOf("key" to JsonPrimitive(key.name), "value" to json))
        }
        return JsonObject(mapOf("format" to JsonPrimitive(FORMAT), "writes" to JsonArray(entries))).toString()
    }

    /** The writes in [text], or null when it no longer decodes with [schema]'s keys (then it counts as a miss). */
    fun decode(schema: StateSchema, text: String): NodeWrites? = try {
        val root = PersistenceJson.parseToJsonElement(text).jsonObject
        if (root["format"]?.jsonPrimitive?.content != FORMAT.toString()) {
            null
        } else {
            val writes = root["writes"]!!.jsonArray
            val keys = arrayOfNulls<StateKey<*>>(writes.size)
            val values = arrayOfNulls<Any?>(writes.size)
            var ok = true
            for (i in writes.indices) {
                val write = writes[i].jsonObject
                val key = schema.keyOrNull(write["key"]!!.jsonPrimitive.content)
                if (key == null) {
                    ok = false
                    break
                }
                @Suppress("UNCHECKED_CAST")
                val value = PersistenceJson.decodeFromJsonElement(key.serializer as KSerializer<Any?>, write["value"]!!)
                if (!key.accepts(value)) {
                    ok = false
                    break
                }
                keys[i] = key
                values[i] = value
            }
            @Suppress("UNCHECKED_CAST")
            if (ok) NodeWrites.wrap(keys as Array<StateKey<*>>, values) else null
        }
    } catch (e: Exception) {
        null
    }

    private fun uncacheable(nodeId: String, key: StateKey<*>, problem: String, cause: Throwable?) =
        IllegalStateException(
            "Node '$nodeId' wrote a value of state key '${key.name}' (${key.typeName}) that its cache cannot hold: " +
                "$problem. Give the key a serializer that reads back what it writes (with Jackson: a record, or a " +
                "constructor annotated @JsonCreator), or remove the node's cache policy.",
            cause,
        )
}
