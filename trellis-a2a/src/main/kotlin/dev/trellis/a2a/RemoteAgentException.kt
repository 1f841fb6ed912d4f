package dev.trellis.a2a

/**
 * A remote A2A agent did not complete its task: it failed, rejected or cancelled it, asked for authentication, or
 * its stream ended before the task did. Fails the node's attempt; its retry policy decides.
 */
public class RemoteAgentException @JvmOverloads constructor(
    /** The remote agent's name. */
    public val agent: String,
    /** The remote task's id, null when none was created. */
    public val taskId: String?,
    /** The task's last state as the protocol spells it (`failed`, `rejected`…), null when unknown. */
    public val state: String?,
    message: String,
    cause: Throwable? = null,
) : RuntimeException(message, cause)
