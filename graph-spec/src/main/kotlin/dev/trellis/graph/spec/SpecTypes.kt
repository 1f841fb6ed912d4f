package dev.trellis.graph.spec

import dev.trellis.graph.StateKey
import kotlinx.serialization.KSerializer
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.builtins.MapSerializer
import kotlinx.serialization.builtins.nullable
import kotlinx.serialization.builtins.serializer
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.descriptors.StructureKind
import kotlinx.serialization.descriptors.nullable

/** A state key's value type as a spec names it: its serializer, its value class and whether null is allowed. */
internal class SpecType(
    val name: String,
    val serializer: KSerializer<Any?>,
    val valueClass: Class<*>,
    val nullable: Boolean,
)

/**
 * The value types of state keys: `string`, `int`, `long`, `double`, `boolean`, `list<T>`, `map<string, T>` and the
 * registry's codecs, each optionally followed by `?` (null allowed).
 */
internal object SpecTypes {
    private val primitives: Map<String, Pair<KSerializer<*>, Class<*>>> = mapOf(
        "string" to (String.serializer() to String::class.java),
        "int" to (Int.serializer() to Int::class.javaObjectType),
        "long" to (Long.serializer() to Long::class.javaObjectType),
        "double" to (Double.serializer() to Double::class.javaObjectType),
        "boolean" to (Boolean.serializer() to Boolean::class.javaObjectType),
    )

    private val PRIMITIVE_NAMES = mapOf(
        "kotlin.String" to "string",
        "kotlin.Int" to "int",
        "kotlin.Long" to "long",
        "kotlin.Double" to "double",
        "kotlin.Boolean" to "boolean",
        // The serializers the Java facade gives keys of these types (`Keys.of`, `Keys.required`).
        "java.lang.String" to "string",
        "java.lang.Integer" to "int",
        "java.lang.Long" to "long",
        "java.lang.Double" to "double",
        "dev.trellis.javaapi.JavaDouble" to "double",
        "java.lang.Boolean" to "boolean",
    )

    /** The type [text] names, or an error message saying what is wrong and what would do. */
    fun parse(text: String, registry: HandlerRegistry): Result<SpecType> = runCatching {
        val trimmed = text.replace(" ", "")
        val nullable = trimmed.endsWith("?")
        val (serializer, valueClass) = resolve(trimmed.removeSuffix("?"), registry, 0)
        @Suppress("UNCHECKED_CAST")
        val typed = (if (nullable) (serializer as KSerializer<Any>).nullable else serializer) as KSerializer<Any?>
        SpecType(normalize(trimmed), typed, valueClass, nullable)
    }

    private fun normalize(text: String): String = text.replace(",", ", ")

    private fun resolve(text: String, registry: HandlerRegistry, depth: Int): Pair<KSerializer<*>, Class<*>> {
        require(depth < 8) { "type '$text' nests too deep; at most 8 levels." }
        primitives[text]?.let { return it }
        registry.codecs[text]?.let { return it }
        if (text.startsWith("list<") && text.endsWith(">")) {
            val (element, _) = resolveNullable(text.substring(5, text.length - 1), registry, depth)
            return ListSerializer(element) to List::class.java
        }
        if (text.startsWith("map<string,") && text.endsWith(">")) {
            val (value, _) = resolveNullable(text.substring(11, text.length - 1), registry, depth)
            return MapSerializer(String.serializer(), value) to Map::class.java
        }
        throw IllegalArgumentException(
            "unknown type '$text'; use string, int, long, double, boolean, list<T>, map<string, T>, or a codec " +
                "registered with codec(\"$text\", serializer, class) (registered: ${registry.codecs.keys})",
        )
    }

    private fun resolveNullable(
        text: String,
        registry: HandlerRegistry,
        depth: Int,
    ): Pair<KSerializer<Any?>, Class<*>> {
        val (serializer, valueClass) = resolve(text.removeSuffix("?"), registry, depth + 1)
        @Suppress("UNCHECKED_CAST")
        val typed = (
            if (text.endsWith(
                    "?",
                )
            ) {
                (serializer as KSerializer<Any>).nullable
            } else {
                serializer
            }
        ) as KSerializer<Any?>
        return typed to valueClass
    }

    /** The spec name of [key]'s type (nullable as the key is), or null when the spec cannot name it. */
    fun nameOf(key: StateKey<*>, registry: HandlerRegistry): String? =
        nameOf(key.serializer.descriptor, registry)?.removeSuffix("?")?.let { if (key.nullable) "$it?" else it }

    /** The spec name of the type [descriptor] describes, or null when the spec cannot name it (no codec for it). */
    fun nameOf(descriptor: SerialDescriptor, registry: HandlerRegistry): String? {
        val suffix = if (descriptor.isNullable) "?" else ""
        val base = when (descriptor.kind) {
            is PrimitiveKind -> PRIMITIVE_NAMES[descriptor.serialName.removeSuffix("?")]
            StructureKind.LIST -> nameOf(descriptor.getElementDescriptor(0), registry)?.let { "list<$it>" }
            StructureKind.MAP -> {
                val key = descriptor.getElementDescriptor(0)
                if (key.kind != PrimitiveKind.STRING || key.isNullable) {
                    null
                } else {
                    nameOf(descriptor.getElementDescriptor(1), registry)?.let { "map<string, $it>" }
                }
            }
            else -> null
        }
        if (base != null) return base + suffix
        for ((name, codec) in registry.codecs) {
            val own = codec.first.descriptor
            if (own == descriptor || (descriptor.isNullable && own.nullable == descriptor)) return name + suffix
        }
        return null
    }
}
