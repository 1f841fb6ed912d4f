package dev.trellis.a2a

/**
 * The payload of a custom event of a remote-agent node: what the remote A2A agent streamed while its task ran, in
 * the order it came. The run's events carry them as `RunEvent.Custom` of the node, as tool calls and tokens are.
 *
 * ```kotlin
 * graph.events(input).collect { event ->
 *     when (val update = (event as? RunEvent.Custom)?.payload) {
 *         is A2aEvent.Status -> println("${update.agent} ${update.state}: ${update.text}")
 *         is A2aEvent.Artifact -> println("${update.agent} made ${update.name}")
 *     }
 * }
 * ```
 *
 * Events are values: equal when of the same kind with the same properties.
 */
public sealed class A2aEvent {
    /** The remote agent's name (its agent card's). */
    public abstract val agent: String

    /** The remote task's id. */
    public abstract val taskId: String

    /** The task's status changed ([state] as A2A names it: `working`, `input-required`, `completed`…). */
    public class Status(
        override val agent: String,
        override val taskId: String,
        /** The task's state, as the protocol spells it. */
        public val state: String,
        /** The text of the status message, empty when it had none. */
        public val text: String,
    ) : A2aEvent() {
        private fun properties(): List<String> = listOf(agent, taskId, state, text)

        override fun equals(other: Any?): Boolean = other is Status && other.properties() == properties()

        override fun hashCode(): Int = properties().hashCode()

        override fun toString(): String = "Status(agent=$agent, taskId=$taskId, state=$state, text=$text)"
    }

    /** The task produced (a chunk of) an artifact. */
    public class Artifact(
        override val agent: String,
        override val taskId: String,
        /** The artifact's name, or its id when it has no name. */
        public val name: String,
        /** The text of its parts (one per line). */
        public val text: String,
    ) : A2aEvent() {
        private fun properties(): List<String> = listOf(agent, taskId, name, text)

        override fun equals(other: Any?): Boolean = other is Artifact && other.properties() == properties()

        override fun hashCode(): Int = properties().hashCode()

        override fun toString(): String = "Artifact(agent=$agent, taskId=$taskId, name=$name, text=$text)"
    }
}
