package dev.trellis.javaapi

import dev.trellis.graph.NodeError
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.TaskError
import dev.trellis.javaapi.internal.KeyCodecs
import kotlinx.serialization.KSerializer
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.builtins.nullable

/**
 * Declares state keys from Java, each with a serializer so every state can be checkpointed. Keys belong to a
 * schema; declare them before building a graph with it. A type the Jackson codecs cannot read back (an interface or
 * abstract class without `@JsonTypeInfo`, a class without a creator) fails with [IllegalArgumentException] when the
 * key is declared.
 *
 * ```java
 * StateSchema schema = new StateSchema("ingest");
 * StateKey<String> url = Keys.required(schema, "url", String.class);
 * StateKey<Integer> count = Keys.of(schema, "count", Integer.class, 0);
 * StateKey<List<String>> notes = Keys.appending(schema, "notes", String.class);
 * ```
 *
 * `String`, `Integer`, `Long`, `Boolean` and `Double` values, and lists and maps of them, need nothing else. Other
 * types (records, enums, POJOs, `Optional`, `java.time`) use the Jackson codecs: add the dependency
 * `dev.trellis:trellis-jackson`, or a key of such a type fails with an error saying so. For generic types see
 * [JacksonKeys]; for a codec of your own, call `schema.key(name, serializer, valueClass, nullable, default, reducer)`.
 */
public object Keys {
    /** A key of [type] with a [default] (null makes the key nullable); last writer wins, with the conflict check. */
    @JvmStatic
    public fun <T> of(schema: StateSchema, name: String, type: Class<T>, default: T): StateKey<T> =
        schema.key(name, KeyCodecs.of(schema, name, type), type, default == null, default, null)

    /** A key of [type] without a default: every run must give it a value in its input. */
    @JvmStatic
    public fun <T> required(schema: StateSchema, name: String, type: Class<T>): StateKey<T> =
        schema.key(name, KeyCodecs.of(schema, name, type), type, false)

    /** A nullable key of [type], null by default. */
    @JvmStatic
    public fun <T> nullable(schema: StateSchema, name: String, type: Class<T>): StateKey<T?> {
        @Suppress("UNCHECKED_CAST") // the serializer writes and reads null as JSON null
        val serializer = KeyCodecs.of(schema, name, type) as KSerializer<T?>
        return schema.key(name, serializer, type, true, null, null)
    }

    /** A key whose value [reducer] folds every write into (so parallel writers never conflict), from [default]. */
    @JvmStatic
    public fun <T> reducing(
        schema: StateSchema,
        name: String,
        type: Class<T>,
        default: T,
        reducer: Reducer<T>,
    ): StateKey<T> =
        schema.key(name, KeyCodecs.of(schema, name, type), type, default == null, default, reducer)

    /** A list of [elementType], empty by default; each write (a list) is appended, so parallel writers never conflict. */
    @JvmStatic
    public fun <E> appending(schema: StateSchema, name: String, elementType: Class<E>): StateKey<List<E>> =
        schema.key(
            name,
            KeyCodecs.listOf(schema, name, elementType),
            List::class.java,
            false,
            emptyList(),
            Reducer.append(),
        )

    /** A map from [keyType] to [valueType], empty by default; each write (a map) is merged into it. */
    @JvmStatic
    public fun <K, V> merging(
        schema: StateSchema,
        name: String,
        keyType: Class<K>,
        valueType: Class<V>,
    ): StateKey<Map<K, V>> =
        schema.key(
            name,
            KeyCodecs.mapOf(schema, name, keyType, valueType),
            Map::class.java,
            false,
            emptyMap(),
            Reducer.merge(),
        )

    /**
     * A key for the failure an error route writes (`JavaGraph.Builder.onFailure(node, handler, key)`): a [NodeError],
     * null until a failure is routed; each routed failure replaces it.
     */
    @JvmStatic
    public fun nodeError(schema: StateSchema, name: String): StateKey<NodeError?> =
        schema.key(name, NodeError.serializer().nullable, NodeError::class.java, true, null, null)

    /**
     * A key for the failures a map node collects (`MapOptions.collectErrors(key)`): a list of [TaskError], empty by
     * default, each write appended.
     */
    @JvmStatic
    public fun taskErrors(schema: StateSchema, name: String): StateKey<List<TaskError>> =
        schema.key(name, ListSerializer(TaskError.serializer()), List::class.java, false, emptyList(), Reducer.append())
}
