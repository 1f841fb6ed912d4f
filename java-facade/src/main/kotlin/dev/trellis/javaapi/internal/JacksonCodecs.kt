package dev.trellis.javaapi.internal

import dev.trellis.graph.StateSchema
import dev.trellis.jackson.JacksonSerializer
import kotlinx.serialization.KSerializer

/**
 * The only place the facade touches the optional Jackson codecs. Its signatures name no Jackson type, and
 * [KeyCodecs] loads it only after checking that the codecs are on the classpath, so the facade runs without them.
 */
internal object JacksonCodecs {
    fun <T> of(
        schema: StateSchema,
        keyName: String,
        type: Class<T>,
    ): KSerializer<T> = readable(schema, keyName, JacksonSerializer.of(type))

    fun <E> listOf(schema: StateSchema, keyName: String, elementType: Class<E>): KSerializer<List<E>> =
        readable(schema, keyName, JacksonSerializer.listOf(elementType))

    fun <K, V> mapOf(
        schema: StateSchema,
        keyName: String,
        keyType: Class<K>,
        valueType: Class<V>,
    ): KSerializer<Map<K, V>> =
        readable(schema, keyName, JacksonSerializer.mapOf(keyType, valueType))

    /** [serializer], once its type is known to be readable back (see [requireReadable]). */
    fun <T> readable(schema: StateSchema, keyName: String, serializer: JacksonSerializer<T>): JacksonSerializer<T> {
        requireReadable(schema, keyName, serializer.type)
        return serializer
    }
}
