package dev.trellis.javaapi.internal

import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.PrimitiveSerialDescriptor
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import kotlinx.serialization.json.JsonDecoder
import kotlinx.serialization.json.JsonPrimitive

/**
 * A `java.lang.Double` as the Jackson codecs write it: a JSON number, or the string `"NaN"`, `"Infinity"` or
 * `"-Infinity"` (which JSON numbers cannot express and kotlinx's own `Double` serializer refuses).
 */
internal object JavaDoubleSerializer : KSerializer<Double> {
    override val descriptor: SerialDescriptor =
        PrimitiveSerialDescriptor("dev.trellis.javaapi.JavaDouble", PrimitiveKind.DOUBLE)

    override fun serialize(encoder: Encoder, value: Double) {
        if (value.isFinite()) encoder.encodeDouble(value) else encoder.encodeString(value.toString())
    }

    override fun deserialize(decoder: Decoder): Double {
        if (decoder !is JsonDecoder) return decoder.decodeDouble()
        val element = decoder.decodeJsonElement()
        val text = (element as? JsonPrimitive)?.content
        return when (text) {
            "NaN" -> Double.NaN
            "Infinity" -> Double.POSITIVE_INFINITY
            "-Infinity" -> Double.NEGATIVE_INFINITY
            else -> text?.toDoubleOrNull()
                ?: throw SerializationException("Expected a number for a java.lang.Double, but found $element.")
        }
    }
}
