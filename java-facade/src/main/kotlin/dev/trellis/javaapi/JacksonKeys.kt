package dev.trellis.javaapi

import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.jackson.JacksonSerializer
import dev.trellis.javaapi.internal.JacksonCodecs
import tools.jackson.core.type.TypeReference

/**
 * Declares state keys of generic Java types, written as a Jackson [TypeReference], with the Jackson codecs.
 * Needs the dependency `dev.trellis:trellis-jackson` (which brings Jackson 3); [Keys] covers plain classes.
 *
 * ```java
 * StateKey<List<Order>> orders = JacksonKeys.required(schema, "orders", new TypeReference<List<Order>>() {});
 * StateKey<Map<String, Integer>> tally = JacksonKeys.of(schema, "tally", new TypeReference<Map<String, Integer>>() {}, Map.of());
 * ```
 */
public object JacksonKeys {
    /** A key of the generic [type] (e.g. `new TypeReference<List<Order>>() {}`) with a [default]. */
    @JvmStatic
    public fun <T> of(schema: StateSchema, name: String, type: TypeReference<T>, default: T): StateKey<T> {
        val serializer = JacksonCodecs.readable(schema, name, JacksonSerializer.of(type))
        return schema.key(name, serializer, serializer.type.rawClass, default == null, default, null)
    }

    /** A key of the generic [type] without a default: every run must give it a value in its input. */
    @JvmStatic
    public fun <T> required(schema: StateSchema, name: String, type: TypeReference<T>): StateKey<T> {
        val serializer = JacksonCodecs.readable(schema, name, JacksonSerializer.of(type))
        return schema.key(name, serializer, serializer.type.rawClass, false)
    }
}
