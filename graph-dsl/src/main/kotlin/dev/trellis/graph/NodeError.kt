package dev.trellis.graph

import kotlinx.serialization.Serializable

/**
 * A failure routed to a handler node (`docs/semantics.md` §13.3), as written to the route's error key: serializable,
 * so it is checkpointed like any value.
 */
@Serializable
public data class NodeError(
    /** The id of the node whose execution failed. */
    val node: String,
    /** The error's class name. */
    val type: String,
    /** The error's message, or null. */
    val message: String?,
    /** How many attempts the failed execution made (its retries included). */
    val attempts: Int,
)
