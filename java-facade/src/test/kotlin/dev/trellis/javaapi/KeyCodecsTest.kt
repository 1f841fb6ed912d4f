package dev.trellis.javaapi

import dev.trellis.graph.StateSchema
import dev.trellis.jackson.JacksonSerializer
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.Json
import org.junit.jupiter.api.Test
import java.time.Instant

/**
 * Keys of String, Integer, Long, Boolean, Double and lists and maps of them use built-in serializers instead of
 * Jackson. They must write exactly the JSON the Jackson codecs wrote, read what those wrote, and keep the type
 * names, so checkpoints and messages stay as they were.
 */
class KeyCodecsTest {
    private val schema = StateSchema("codecs")

    @Suppress("UNCHECKED_CAST")
    private fun sameAsJackson(builtInKey: KSerializer<*>, jacksonKey: KSerializer<*>, values: List<Any?>) {
        val builtIn = builtInKey as KSerializer<Any?>
        val jackson = jacksonKey as KSerializer<Any?>
        builtIn.descriptor.serialName shouldBe jackson.descriptor.serialName
        for (value in values) {
            withClue("value $value of ${jackson.descriptor.serialName}") {
                val written = Json.encodeToString(builtIn, value)
                written shouldBe Json.encodeToString(jackson, value)
                // equals, not kotest's numeric comparison: NaN must read back as NaN
                val byBuiltIn = Json.decodeFromString(builtIn, written)
                val byJackson = Json.decodeFromString(jackson, written)
                withClue("read back as $byBuiltIn and $byJackson") {
                    (byBuiltIn == value) shouldBe true
                    (byJackson == value) shouldBe true
                }
            }
        }
    }

    @Test
    fun `scalar keys write and read what the Jackson codecs did`() {
        val text = "héllo wörld 世界 🌍 \"quoted\" \\ back\\slash\n\ttab ' ∑∞ — \u0001"
        sameAsJackson(
            Keys.required(schema, "s", String::class.java).serializer,
            JacksonSerializer.of(String::class.java),
            listOf("", "plain", text, null),
        )
        sameAsJackson(
            Keys.of(schema, "i", Int::class.javaObjectType, 0).serializer,
            JacksonSerializer.of(Int::class.javaObjectType),
            listOf(0, -1, Int.MAX_VALUE, Int.MIN_VALUE, null),
        )
        sameAsJackson(
            Keys.of(schema, "l", Long::class.javaObjectType, 0L).serializer,
            JacksonSerializer.of(Long::class.javaObjectType),
            listOf(
                0L,
                Long.MAX_VALUE,
                Long.MIN_VALUE,
                (1L shl 53) + 1,
                null,
            ),
        )
        sameAsJackson(
            Keys.of(schema, "b", Boolean::class.javaObjectType, false).serializer,
            JacksonSerializer.of(Boolean::class.javaObjectType),
            listOf(true, false, null),
        )
        sameAsJackson(
            Keys.nullable(schema, "d", Double::class.javaObjectType).serializer,
            JacksonSerializer.of(Double::class.javaObjectType),
            listOf(
                0.0,
                -0.0,
                1.0,
                0.1 + 0.2,
                1e20,
                1.5e-7,
                Double.MAX_VALUE,
                Double.NaN,
                Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY,
                null,
            ),
        )
    }

    @Test
    fun `list and map keys write and read what the Jackson codecs did`() {
        sameAsJackson(
            Keys.appending(schema, "ls", String::class.java).serializer,
            JacksonSerializer.listOf(String::class.java),
            listOf(emptyList(), listOf("a", null, "c")),
        )
        sameAsJackson(
            Keys.appending(schema, "ld", Double::class.javaObjectType).serializer,
            JacksonSerializer.listOf(Double::class.javaObjectType),
            listOf(listOf(1.0, Double.NaN, Double.NEGATIVE_INFINITY, 2.5)),
        )
        sameAsJackson(
            Keys.merging(schema, "msi", String::class.java, Int::class.javaObjectType).serializer,
            JacksonSerializer.mapOf(String::class.java, Int::class.javaObjectType),
            listOf(emptyMap(), linkedMapOf("b" to 2, "a" to 1, "n" to null)),
        )
        sameAsJackson(
            Keys.merging(schema, "mib", Int::class.javaObjectType, Boolean::class.javaObjectType).serializer,
            JacksonSerializer.mapOf(Int::class.javaObjectType, Boolean::class.javaObjectType),
            listOf(linkedMapOf(7 to true, -1 to false)),
        )
        sameAsJackson(
            Keys.merging(schema, "mld", Long::class.javaObjectType, Double::class.javaObjectType).serializer,
            JacksonSerializer.mapOf(Long::class.javaObjectType, Double::class.javaObjectType),
            listOf(linkedMapOf(Long.MAX_VALUE to 0.5, 3L to Double.POSITIVE_INFINITY)),
        )
        sameAsJackson(
            Keys.merging(schema, "mds", Double::class.javaObjectType, String::class.java).serializer,
            JacksonSerializer.mapOf(Double::class.javaObjectType, String::class.java),
            listOf(linkedMapOf(1.5 to "x", -2.0 to "y")),
        )
        sameAsJackson(
            Keys.merging(schema, "mbs", Boolean::class.javaObjectType, String::class.java).serializer,
            JacksonSerializer.mapOf(Boolean::class.javaObjectType, String::class.java),
            listOf(linkedMapOf(true to "t", false to "f")),
        )
    }

    @Test
    fun `other types use the Jackson codecs when they are on the classpath`() {
        Keys.of(
            schema,
            "when",
            Instant::class.java,
            Instant.EPOCH,
        ).serializer.shouldBeInstanceOf<JacksonSerializer<*>>()
        Keys.appending(schema, "times", Instant::class.java).serializer.shouldBeInstanceOf<JacksonSerializer<*>>()
        Keys.merging(
            schema,
            "byTime",
            String::class.java,
            Instant::class.java,
        ).serializer.shouldBeInstanceOf<JacksonSerializer<*>>()
        Keys.of(schema, "count", Int::class.javaObjectType, 0).typeName shouldBe "java.lang.Integer"
        Keys.nullable(schema, "note", String::class.java).typeName shouldBe "java.lang.String?"
    }
}
