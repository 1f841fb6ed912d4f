package dev.trellis.javaapi.internal

import dev.trellis.graph.StateSchema
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.KSerializer
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.builtins.MapSerializer
import kotlinx.serialization.builtins.nullable
import kotlinx.serialization.builtins.serializer
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder

/**
 * Picks the serializer of a state key declared from Java.
 *
 * String, Integer, Long, Boolean and Double values, and lists and maps of them, get built-in kotlinx serializers,
 * so such keys need no Jackson; they write the same JSON the Jackson codecs write, so checkpoints are
 * interchangeable. Every other type goes to the Jackson codecs (`trellis-jackson`) when they are on the classpath,
 * and fails with an error naming that dependency when they are not.
 *
 * Values may be null (top-level values, list elements, map values), as Jackson allows; whether a key accepts null
 * is the key's business.
 */
internal object KeyCodecs {
    private val builtIn: Map<Class<*>, KSerializer<*>> = buildMap {
        put(String::class.java, String.serializer())
        for (type in listOf(Int::class.javaObjectType, Int::class.javaPrimitiveType!!)) put(type, Int.serializer())
        for (type in listOf(Long::class.javaObjectType, Long::class.javaPrimitiveType!!)) put(type, Long.serializer())
        for (type in listOf(
            Boolean::class.javaObjectType,
            Boolean::class.javaPrimitiveType!!,
        )) {
            put(type, Boolean.serializer())
        }
        for (type in listOf(
            Double::class.javaObjectType,
            Double::class.javaPrimitiveType!!,
        )) {
            put(type, JavaDoubleSerializer)
        }
    }

    /** Whether `trellis-jackson` and Jackson itself can be loaded. */
    private val jacksonAvailable: Boolean by lazy {
        val loader = KeyCodecs::class.java.classLoader
        try {
            Class.forName("dev.trellis.jackson.JacksonSerializer", false, loader)
            Class.forName("tools.jackson.databind.ObjectMapper", false, loader)
            true
        } catch (e: ClassNotFoundException) {
            false
        } catch (e: LinkageError) {
            false
        }
    }

    /** A serializer of [type] for the key [keyName]. */
    fun <T> of(schema: StateSchema, keyName: String, type: Class<T>): KSerializer<T> {
        val scalar = scalar(type) ?: return jackson(keyName, javaName(type)) { JacksonCodecs.of(schema, keyName, type) }
        return JavaNamed(javaName(type), scalar.nullable).unchecked()
    }

    /** A serializer of lists of [elementType] for the key [keyName]. */
    fun <E> listOf(schema: StateSchema, keyName: String, elementType: Class<E>): KSerializer<List<E>> {
        val name = "java.util.List<${javaName(elementType)}>"
        val element =
            scalar(elementType) ?: return jackson(keyName, name) { JacksonCodecs.listOf(schema, keyName, elementType) }
        return JavaNamed(name, ListSerializer(element.nullable)).unchecked()
    }

    /** A serializer of maps from [keyType] to [valueType] for the key [keyName]. */
    fun <K, V> mapOf(
        schema: StateSchema,
        keyName: String,
        keyType: Class<K>,
        valueType: Class<V>,
    ): KSerializer<Map<K, V>> {
        val name = "java.util.Map<${javaName(keyType)},${javaName(valueType)}>"
        val keys = scalar(keyType)
        val values = scalar(valueType)
        if (keys == null || values == null) {
            return jackson(keyName, name) { JacksonCodecs.mapOf(schema, keyName, keyType, valueType) }
        }
        return JavaNamed(name, MapSerializer(keys, values.nullable)).unchecked()
    }

    @Suppress("UNCHECKED_CAST")
    private fun scalar(type: Class<*>): KSerializer<Any>? = builtIn[type] as KSerializer<Any>?

    /** The name Jackson gives the type (boxed, so the descriptor name is not a primitive's). */
    private fun javaName(type: Class<*>): String = (type.kotlin.javaObjectType).name

    private fun <T> jackson(keyName: String, typeName: String, create: () -> KSerializer<T>): KSerializer<T> {
        check(jacksonAvailable) {
            "State key '$keyName' holds values of type $typeName, which need the Jackson codecs, but they are not on " +
                "the classpath. Add the dependency dev.trellis:trellis-jackson (it brings Jackson 3), or declare the " +
                "key with a serializer of your own: schema.key(name, serializer, valueClass, nullable, default, " +
                "reducer). Without Jackson, Keys handles String, Integer, Long, Boolean and Double values and lists " +
                "and maps of them."
        }
        return create()
    }

    @Suppress("UNCHECKED_CAST")
    private fun <T> KSerializer<*>.unchecked(): KSerializer<T> = this as KSerializer<T>
}

/**
 * A built-in serializer under the Java type's name, so that a key's type reads `java.lang.Integer` or
 * `java.util.List<java.lang.String>` in error messages, as it did with the Jackson codecs.
 */
private class JavaNamed<T>(private val name: String, private val delegate: KSerializer<T>) : KSerializer<T> {
    @OptIn(ExperimentalSerializationApi::class)
    override val descriptor: SerialDescriptor = SerialDescriptor(name, delegate.descriptor)

    override fun serialize(encoder: Encoder, value: T) = delegate.serialize(encoder, value)

    override fun deserialize(decoder: Decoder): T = delegate.deserialize(decoder)

    override fun equals(other: Any?): Boolean =
        other is JavaNamed<*> && other.name == name && other.delegate == delegate

    override fun hashCode(): Int = name.hashCode()

    override fun toString(): String = "JavaNamed($name)"
}
