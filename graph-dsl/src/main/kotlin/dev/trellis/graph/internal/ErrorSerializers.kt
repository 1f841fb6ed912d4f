package dev.trellis.graph.internal

import dev.trellis.graph.NodeError
import dev.trellis.graph.TaskError
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder

/*
 * The serializers of NodeError and TaskError. Those are plain classes (a data class's `copy` and `componentN` are
 * not API); their checkpoint form is the one they had as `@Serializable` data classes, kept by these forms with the
 * same serial names, properties and order, so checkpoints written before still decode.
 */

@Serializable
@SerialName("dev.trellis.graph.NodeError")
private class NodeErrorForm(val node: String, val type: String, val message: String?, val attempts: Int)

@Serializable
@SerialName("dev.trellis.graph.TaskError")
private class TaskErrorForm(val index: Int, val type: String, val message: String?)

/** [NodeError]'s serializer: `{"node":…,"type":…,"message":…,"attempts":…}`. */
internal object NodeErrorSerializer : KSerializer<NodeError> {
    private val form = NodeErrorForm.serializer()

    override val descriptor: SerialDescriptor get() = form.descriptor

    override fun serialize(encoder: Encoder, value: NodeError) {
        encoder.encodeSerializableValue(form, NodeErrorForm(value.node, value.type, value.message, value.attempts))
    }

    override fun deserialize(decoder: Decoder): NodeError =
        decoder.decodeSerializableValue(form).let { NodeError(it.node, it.type, it.message, it.attempts) }
}

/** [TaskError]'s serializer: `{"index":…,"type":…,"message":…}`. */
internal object TaskErrorSerializer : KSerializer<TaskError> {
    private val form = TaskErrorForm.serializer()

    override val descriptor: SerialDescriptor get() = form.descriptor

    override fun serialize(encoder: Encoder, value: TaskError) {
        encoder.encodeSerializableValue(form, TaskErrorForm(value.index, value.type, value.message))
    }

    override fun deserialize(decoder: Decoder): TaskError =
        decoder.decodeSerializableValue(form).let { TaskError(it.index, it.type, it.message) }
}
