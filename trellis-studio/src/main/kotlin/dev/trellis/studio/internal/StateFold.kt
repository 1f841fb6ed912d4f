package dev.trellis.studio.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateKey
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement

/**
 * Values of state keys between JSON and Kotlin through each key's own serializer (the one checkpoints use), and the
 * state of a checkpoint chain folded from JSON: the last full checkpoint's state, then each delta's writes, reduced
 * with the key's reducer.
 */
internal object StateFold {
    val json: Json = Json {
        encodeDefaults = false
        prettyPrint = false
    }

    /** [value] of [key] as JSON. */
    fun encode(key: StateKey<*>, value: Any?): JsonElement {
        @Suppress("UNCHECKED_CAST")
        return json.encodeToJsonElement(key.serializer as KSerializer<Any?>, value)
    }

    /**
     * [element] as a value of [key].
     * @throws IllegalArgumentException naming the key and its type when [element] is not one.
     */
    fun decode(key: StateKey<*>, element: JsonElement): Any? {
        val value = try {
            json.decodeFromJsonElement(key.serializer, element)
        } catch (e: SerializationException) {
            throw IllegalArgumentException(wrongType(key, element, e.message))
        } catch (e: IllegalArgumentException) {
            throw IllegalArgumentException(wrongType(key, element, e.message))
        }
        require(key.accepts(value)) { wrongType(key, element, "null is not allowed") }
        return value
    }

    private fun wrongType(key: StateKey<*>, element: JsonElement, why: String?): String {
        val shown = element.toString().let { if (it.length > 80) it.take(80) + "…" else it }
        return "State key '${key.name}' takes a ${key.typeName}, but the value $shown is not one" +
            (why?.lineSequence()?.firstOrNull()?.let { " ($it)" } ?: "") + "; enter it as JSON of that type."
    }

    /** The state after [chain] (the payloads from a full checkpoint on, oldest first) as JSON by key name. */
    fun fold(graph: Graph?, chain: List<CheckpointPayload>): Map<String, JsonElement> {
        val start = chain.indexOfLast { it.state != null }
        if (start < 0) return emptyMap()
        val out = LinkedHashMap(chain[start].state!!)
        for (payload in chain.subList(start + 1, chain.size)) {
            if (payload.childrenOnly) continue
            for (write in payload.writes) {
                val key = graph?.schema?.keyOrNull(write.key)
                val old = out[write.key]
                out[write.key] = if (key?.reducer == null || old == null) write.value else reduce(key, old, write.value)
            }
        }
        return out
    }

    private fun reduce(key: StateKey<*>, old: JsonElement, update: JsonElement): JsonElement = try {
        @Suppress("UNCHECKED_CAST")
        val reducer = key.reducer as Reducer<Any?>
        encode(key, reducer.reduce(decode(key, old), decode(key, update)))
    } catch (e: IllegalArgumentException) {
        update
    }
}
