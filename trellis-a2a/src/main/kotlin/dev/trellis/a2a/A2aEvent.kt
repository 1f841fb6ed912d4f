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
 */
public sealed class A2aEvent {
    /** The remote agent's name (its agent card's). */
    public abstract val agent: String

    /** The remote task's id. */
    public abstract val taskId: String

    /** The task's status changed ([state] as A2A names it: `working`, `input-required`, `completed`…). */
    public data class Status(
        override val agent: String,
        override val taskId: String,
        /** The task's state, as the protocol spells it. */
        val state: String,
        /** The text of the status message, empty when it had none. */
        val text: String,
    ) : A2aEvent()

    /** The task produced (a chunk of) an artifact. */
    public data class Artifact(
        override val agent: String,
        override val taskId: String,
        /** The artifact's name, or its id when it has no name. */
        val name: String,
        /** The text of its parts (one per line). */
        val text: String,
    ) : A2aEvent()
}
