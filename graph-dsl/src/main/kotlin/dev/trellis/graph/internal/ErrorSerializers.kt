package dev.trellis.graph.internal

import dev.trellis.graph.NodeError
import dev.trellis.graph.SurrogateSerializer
import dev.trellis.graph.TaskError
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable

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
internal val nodeErrorSerializer: KSerializer<NodeError> = SurrogateSerializer(
    NodeErrorForm.serializer(),
    { NodeErrorForm(it.node, it.type, it.message, it.attempts) },
    { NodeError(it.node, it.type, it.message, it.attempts) },
)

/** [TaskError]'s serializer: `{"index":…,"type":…,"message":…}`. */
internal val taskErrorSerializer: KSerializer<TaskError> = SurrogateSerializer(
    TaskErrorForm.serializer(),
    { TaskErrorForm(it.index, it.type, it.message) },
    { TaskError(it.index, it.type, it.message) },
)
