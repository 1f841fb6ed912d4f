package dev.trellis.runtime.agent

/**
 * The payload of a custom event streamed by an agent called from an [agentNode].
 *
 * ```kotlin
 * graph.events(input).collect { event ->
 *     if (event is RunEvent.Custom) when (val p = event.payload) {
 *         is AgentEvent.Token -> print(p.text)
 *         is AgentEvent.Step -> println("[${p.agent}] ${p.description}")
 *     }
 * }
 * ```
 */
public sealed class AgentEvent(
    /** The name of the agent that streamed it. */
    public val agent: String,
) {
    /** A piece of the agent's reply. */
    public class Token(
        agent: String,
        /** The text streamed. */
        public val text: String,
    ) : AgentEvent(agent) {
        override fun equals(other: Any?): Boolean = other is Token && other.agent == agent && other.text == text

        override fun hashCode(): Int = 31 * agent.hashCode() + text.hashCode()

        override fun toString(): String = "Token($agent: $text)"
    }

    /** A step of the agent's work. */
    public class Step(
        agent: String,
        /** What the agent did. */
        public val description: String,
    ) : AgentEvent(agent) {
        override fun equals(other: Any?): Boolean =
            other is Step && other.agent == agent && other.description == description

        override fun hashCode(): Int = 31 * agent.hashCode() + description.hashCode()

        override fun toString(): String = "Step($agent: $description)"
    }
}
