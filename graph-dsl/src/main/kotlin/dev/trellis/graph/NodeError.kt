package dev.trellis.graph

import dev.trellis.graph.internal.nodeErrorSerializer
import kotlinx.serialization.KSerializer

/**
 * A failure routed to a handler node (`docs/semantics.md` §13.3), as written to the route's error key: serializable
 * ([serializer]), so it is checkpointed like any value. A value: equal to another with the same properties.
 */
public class NodeError(
    /** The id of the node whose execution failed. */
    public val node: String,
    /** The error's class name. */
    public val type: String,
    /** The error's message, or null. */
    public val message: String?,
    /** How many attempts the failed execution made (its retries included). */
    public val attempts: Int,
) {
    private fun properties(): List<Any?> = listOf(node, type, message, attempts)

    override fun equals(other: Any?): Boolean = other is NodeError && other.properties() == properties()

    override fun hashCode(): Int = properties().hashCode()

    override fun toString(): String = "NodeError(node=$node, type=$type, message=$message, attempts=$attempts)"

    /** The serializer. */
    public companion object {
        /** How node errors are written in checkpoints (kotlinx.serialization), `NodeError.serializer()` from Java. */
        @JvmStatic
        public fun serializer(): KSerializer<NodeError> = nodeErrorSerializer
    }
}
