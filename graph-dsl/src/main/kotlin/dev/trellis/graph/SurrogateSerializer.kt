package dev.trellis.graph

import kotlinx.serialization.KSerializer
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder

/**
 * A serializer of [T] through a `@Serializable` form [F]: how a plain public value class (no data class `copy`, a
 * `serializer()` static for Java) keeps the checkpoint form it had as a `@Serializable` class — the form has the same
 * serial name, properties, defaults and order.
 */
@InternalTrellisApi
public class SurrogateSerializer<T, F>(
    private val form: KSerializer<F>,
    private val toForm: (T) -> F,
    private val fromForm: (F) -> T,
) : KSerializer<T> {
    override val descriptor: SerialDescriptor get() = form.descriptor

    override fun serialize(encoder: Encoder, value: T) {
        encoder.encodeSerializableValue(form, toForm(value))
    }

    override fun deserialize(decoder: Decoder): T = fromForm(decoder.decodeSerializableValue(form))
}
