package dev.trellis.runtime.agent

/**
 * A copy of an agent's conversation state, taken by [Agent.snapshot] and given back to [Agent.restore].
 *
 * The [value] is the agent's own: a list of messages, a data object, anything it can restore from. It
 * should be immutable (or a copy no one else holds), since it is kept while the agent runs.
 */
public class AgentSnapshot(
    /** The agent's saved state. */
    public val value: Any?,
) {
    override fun equals(other: Any?): Boolean = this === other || (other is AgentSnapshot && other.value == value)

    override fun hashCode(): Int = value.hashCode()

    override fun toString(): String = "AgentSnapshot($value)"
}
