package dev.trellis.javaapi.internal

import dev.trellis.jackson.JacksonSerializer
import kotlinx.serialization.KSerializer

/**
 * The only place the facade touches the optional Jackson codecs. Its signatures name no Jackson type, and
 * [KeyCodecs] loads it only after checking that the codecs are on the classpath, so the facade runs without them.
 */
internal object JacksonCodecs {
    fun <T> of(type: Class<T>): KSerializer<T> = JacksonSerializer.of(type)

    fun <E> listOf(elementType: Class<E>): KSerializer<List<E>> = JacksonSerializer.listOf(elementType)

    fun <K, V> mapOf(keyType: Class<K>, valueType: Class<V>): KSerializer<Map<K, V>> = JacksonSerializer.mapOf(keyType, valueType)
}
