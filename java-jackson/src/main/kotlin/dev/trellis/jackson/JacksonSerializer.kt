package dev.trellis.jackson

import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonDecoder
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonEncoder
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.JsonUnquotedLiteral
import tools.jackson.core.JacksonException
import tools.jackson.core.type.TypeReference
import tools.jackson.databind.DeserializationFeature
import tools.jackson.databind.JavaType
import tools.jackson.databind.ObjectMapper
import tools.jackson.databind.cfg.DateTimeFeature
import tools.jackson.databind.json.JsonMapper

/**
 * A kotlinx [KSerializer] that reads and writes values of a Java [type] with Jackson, so a state key can
 * hold Java records, enums, POJOs, `Optional`s and `java.time` values.
 *
 * Every `StateKey` carries a kotlinx serializer (that is how state is checkpointed); Java types cannot
 * carry one, so this serializer bridges through [JsonElement]: Jackson writes the value as JSON, kotlinx
 * `Json` embeds the tree. It therefore works with the kotlinx `Json` format only and fails with a
 * [SerializationException] saying so with any other format.
 *
 * ```java
 * KSerializer<Order> orders = JacksonSerializer.of(Order.class);
 * KSerializer<List<Order>> lists = JacksonSerializer.of(new TypeReference<List<Order>>() {});
 * String json = Json.Default.encodeToString(orders, new Order("42", Status.NEW));
 * ```
 *
 * The default mapper ([defaultMapper]) handles records, enums, `Optional` and `java.time` out of the box
 * (Jackson 3 ships the former jdk8 and JSR-310 modules in databind) and writes dates as ISO-8601 strings.
 * Pass a mapper of your own to change that.
 */
public class JacksonSerializer<T> private constructor(
    private val mapper: ObjectMapper,
    /** The Jackson type this serializer reads and writes. */
    public val type: JavaType,
) : KSerializer<T> {
    @OptIn(ExperimentalSerializationApi::class)
    override val descriptor: SerialDescriptor =
        SerialDescriptor(type.toCanonical(), JsonElement.serializer().descriptor)

    override fun serialize(encoder: Encoder, value: T) {
        val json = encoder as? JsonEncoder ?: throw SerializationException(notJson("write", encoder))
        val text = try {
            mapper.writeValueAsString(value)
        } catch (e: JacksonException) {
            throw SerializationException(
                "Jackson could not write a value of type ${type.toCanonical()}: ${e.originalMessage}",
                e,
            )
        }
        json.encodeJsonElement(exactNumbers(Json.parseToJsonElement(text)))
    }

    override fun deserialize(decoder: Decoder): T {
        val json = decoder as? JsonDecoder ?: throw SerializationException(notJson("read", decoder))
        val element = json.decodeJsonElement()
        return try {
            mapper.readValue(element.toString(), type)
        } catch (e: JacksonException) {
            throw SerializationException(
                "Jackson could not read a value of type ${type.toCanonical()} from $element: ${e.originalMessage}",
                e,
            )
        }
    }

    /**
     * kotlinx writes a number literal of a tree through `double` unless it fits a `long`, which would round
     * e.g. a `BigDecimal`; such literals are rewritten as unquoted literals, which are written verbatim.
     */
    @OptIn(ExperimentalSerializationApi::class)
    private fun exactNumbers(element: JsonElement): JsonElement = when (element) {
        is JsonObject -> {
            val entries = element.mapValues { exactNumbers(it.value) }
            if (entries.all { (k, v) -> v === element[k] }) element else JsonObject(entries)
        }
        is JsonArray -> {
            val items = element.map { exactNumbers(it) }
            if (items.indices.all { items[it] === element[it] }) element else JsonArray(items)
        }
        is JsonNull -> element
        is JsonPrimitive -> {
            val content = element.content
            val exact = element.isString || content == "true" || content == "false" || content.toLongOrNull() != null ||
                content.toDoubleOrNull()?.let { it.toString() == content } == true
            if (exact) element else JsonUnquotedLiteral(content)
        }
    }

    private fun notJson(action: String, codec: Any): String =
        "JacksonSerializer<${type.toCanonical()}> can only $action values with the kotlinx Json format, " +
            "but was used with ${codec.javaClass.name}. Use kotlinx.serialization.json.Json, or give the key a serializer for this format."

    override fun equals(other: Any?): Boolean =
        this === other || (other is JacksonSerializer<*> && other.type == type && other.mapper === mapper)

    override fun hashCode(): Int = type.hashCode()

    override fun toString(): String = "JacksonSerializer(${type.toCanonical()})"

    /** Factories. */
    public companion object {
        private val DEFAULT_MAPPER: JsonMapper = JsonMapper.builder()
            .disable(DateTimeFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
            .enable(DateTimeFeature.WRITE_DATES_WITH_ZONE_ID)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .build()

        /**
         * The mapper used when none is given: Jackson 3's defaults (records, enums, `Optional`, `java.time` as
         * ISO-8601 strings) tuned so a value reads back equal to what was written: offsets and zone ids are
         * kept (not adjusted to UTC) and decimals are read as `BigDecimal` without a detour through `double`.
         */
        @JvmStatic
        public fun defaultMapper(): ObjectMapper = DEFAULT_MAPPER

        /** A serializer of [type] using the [defaultMapper]. */
        @JvmStatic
        public fun <T> of(type: Class<T>): JacksonSerializer<T> = of(type, DEFAULT_MAPPER)

        /** A serializer of [type] using [mapper]. */
        @JvmStatic
        public fun <T> of(type: Class<T>, mapper: ObjectMapper): JacksonSerializer<T> =
            JacksonSerializer(mapper, mapper.constructType(type))

        /** A serializer of the generic [type], e.g. `new TypeReference<List<Order>>() {}`, using the [defaultMapper]. */
        @JvmStatic
        public fun <T> of(type: TypeReference<T>): JacksonSerializer<T> = of(type, DEFAULT_MAPPER)

        /** A serializer of the generic [type] using [mapper]. */
        @JvmStatic
        public fun <T> of(type: TypeReference<T>, mapper: ObjectMapper): JacksonSerializer<T> =
            JacksonSerializer(mapper, mapper.constructType(type))

        /** A serializer of [type] (built with the mapper's `TypeFactory`) using [mapper]; the caller vouches for `T`. */
        @JvmStatic
        public fun <T> of(type: JavaType, mapper: ObjectMapper): JacksonSerializer<T> = JacksonSerializer(mapper, type)

        /** A serializer of lists of [elementType] using the [defaultMapper]. */
        @JvmStatic
        public fun <E> listOf(elementType: Class<E>): JacksonSerializer<List<E>> =
            JacksonSerializer(
                DEFAULT_MAPPER,
                DEFAULT_MAPPER.typeFactory.constructCollectionType(List::class.java, elementType),
            )

        /** A serializer of maps from [keyType] to [valueType] using the [defaultMapper]. */
        @JvmStatic
        public fun <K, V> mapOf(keyType: Class<K>, valueType: Class<V>): JacksonSerializer<Map<K, V>> =
            JacksonSerializer(
                DEFAULT_MAPPER,
                DEFAULT_MAPPER.typeFactory.constructMapType(Map::class.java, keyType, valueType),
            )
    }
}
