package dev.trellis.runtime.persistence

import dev.trellis.graph.StateSchema
import dev.trellis.runtime.internal.checkpoint.PersistenceJson
import dev.trellis.runtime.internal.checkpoint.PositionCodec
import dev.trellis.runtime.internal.checkpoint.appendIso
import io.kotest.matchers.shouldBe
import kotlinx.serialization.json.JsonElement
import org.junit.jupiter.api.Test
import java.time.Instant
import kotlin.random.Random

/** The hand-written parts of a delta checkpoint's text say what the general encoders would. */
class CheckpointTextTest {
    @Test
    fun `createdAt is written as Instant toString writes it`() {
        val random = Random(42)
        val instants = listOf(
            Instant.EPOCH,
            Instant.parse("2026-11-24T10:15:30Z"),
            Instant.parse("2026-11-24T10:15:30.100Z"),
            Instant.parse("2026-11-24T10:15:30.120300Z"),
            Instant.parse("2026-11-24T10:15:30.000000001Z"),
            Instant.parse("2000-02-29T23:59:59.999999999Z"),
            Instant.parse("1969-12-31T23:59:59.5Z"),
            Instant.parse("0000-01-01T00:00:00Z"),
            Instant.parse("9999-12-31T23:59:59.999Z"),
            Instant.parse("+10000-01-01T00:00:00Z"),
            Instant.parse("-0001-12-31T23:59:59Z"),
        ) + List(10_000) {
            Instant.ofEpochSecond(
                random.nextLong(-62_167_219_200L, 253_402_300_800L),
                random.nextInt(1_000_000_000).toLong(),
            )
        } + List(1_000) { Instant.ofEpochMilli(random.nextLong(0, 4_102_444_800_000L)) }
        for (instant in instants) StringBuilder().appendIso(instant).toString() shouldBe instant.toString()
    }

    @Test
    fun `values of built-in serializers are written as their serializer writes them`() {
        val schema = object : StateSchema("text") {
            val count = key("count", default = 0)
            val big = key("big", default = 0L)
            val flag = key("flag", default = false)
            val label = key("label", default = "")
            val names = key("names", default = emptyList<String>())
        }
        val cases = listOf(
            schema.count to Int.MIN_VALUE,
            schema.count to 42,
            schema.big to Long.MAX_VALUE,
            schema.flag to true,
            schema.label to "a \"quoted\" \\ line\nwith\ttabs, \u0001 and \u00e9\u4e2d",
            schema.names to listOf("x", "y\n"),
        )
        for ((key, value) in cases) {
            val text = StringBuilder().also { PositionCodec.appendValueText(it, key, value) }.toString()
            parse(text) shouldBe parse(PositionCodec.encodeValueText(key, value))
        }
    }

    private fun parse(text: String): JsonElement = PersistenceJson.parseToJsonElement(text)
}
