package dev.trellis.javaapi

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.jackson.JacksonSerializer
import dev.trellis.javaapi.internal.requireReadable
import kotlinx.serialization.KSerializer
import tools.jackson.core.type.TypeReference

/**
 * Declares state keys from Java, with Jackson serializers (records, enums, POJOs, `Optional`, `java.time`)
 * so every state can be checkpointed. Keys belong to a schema; declare them before building a graph with it.
 * A type Jackson cannot read back (an interface or abstract class without `@JsonTypeInfo`, a class without a
 * creator) fails with [IllegalArgumentException] when the key is declared.
 *
 * ```java
 * StateSchema schema = new StateSchema("ingest");
 * StateKey<String> url = Keys.required(schema, "url", String.class);
 * StateKey<Integer> count = Keys.of(schema, "count", Integer.class, 0);
 * StateKey<List<String>> notes = Keys.appending(schema, "notes", String.class);
 * ```
 *
 * For a codec of your own, call `schema.key(name, serializer, valueClass, nullable, default, reducer)`.
 */
public object Keys {
    /** A key of [type] with a [default] (null makes the key nullable); last writer wins, with the conflict check. */
    @JvmStatic
    public fun <T> of(schema: StateSchema, name: String, type: Class<T>, default: T): StateKey<T> =
        schema.key(name, serializer(schema, name, type), type, default == null, default, null)

    /** A key of the generic [type] (e.g. `new TypeReference<List<Order>>() {}`) with a [default]. */
    @JvmStatic
    public fun <T> of(schema: StateSchema, name: String, type: TypeReference<T>, default: T): StateKey<T> {
        val serializer = serializer(schema, name, type)
        return schema.key(name, serializer, serializer.type.rawClass, default == null, default, null)
    }

    /** A key of [type] without a default: every run must give it a value in its input. */
    @JvmStatic
    public fun <T> required(schema: StateSchema, name: String, type: Class<T>): StateKey<T> =
        schema.key(name, serializer(schema, name, type), type, false)

    /** A key of the generic [type] without a default. */
    @JvmStatic
    public fun <T> required(schema: StateSchema, name: String, type: TypeReference<T>): StateKey<T> {
        val serializer = serializer(schema, name, type)
        return schema.key(name, serializer, serializer.type.rawClass, false)
    }

    /** A nullable key of [type], null by default. */
    @JvmStatic
    public fun <T> nullable(schema: StateSchema, name: String, type: Class<T>): StateKey<T?> {
        @Suppress("UNCHECKED_CAST") // the serializer writes and reads null as JSON null
        val serializer = serializer(schema, name, type) as KSerializer<T?>
        return schema.key(name, serializer, type, true, null, null)
    }

    /** A key whose value [reducer] folds every write into (so parallel writers never conflict), from [default]. */
    @JvmStatic
    public fun <T> reducing(schema: StateSchema, name: String, type: Class<T>, default: T, reducer: Reducer<T>): StateKey<T> =
        schema.key(name, serializer(schema, name, type), type, default == null, default, reducer)

    /** A list of [elementType], empty by default; each write (a list) is appended, so parallel writers never conflict. */
    @JvmStatic
    public fun <E> appending(schema: StateSchema, name: String, elementType: Class<E>): StateKey<List<E>> =
        schema.key(name, checked(schema, name, JacksonSerializer.listOf(elementType)), List::class.java, false, emptyList(), Reducer.append())

    /** A map from [keyType] to [valueType], empty by default; each write (a map) is merged into it. */
    @JvmStatic
    public fun <K, V> merging(schema: StateSchema, name: String, keyType: Class<K>, valueType: Class<V>): StateKey<Map<K, V>> =
        schema.key(name, checked(schema, name, JacksonSerializer.mapOf(keyType, valueType)), Map::class.java, false, emptyMap(), Reducer.merge())

    private fun <T> serializer(schema: StateSchema, name: String, type: Class<T>) = checked(schema, name, JacksonSerializer.of(type))

    private fun <T> serializer(schema: StateSchema, name: String, type: TypeReference<T>) = checked(schema, name, JacksonSerializer.of(type))

    /** [serializer], once its type is known to be readable (see [requireReadable]). */
    private fun <T> checked(schema: StateSchema, name: String, serializer: JacksonSerializer<T>): JacksonSerializer<T> {
        requireReadable(schema, name, serializer.type)
        return serializer
    }
}
