package dev.trellis.langchain4j

import dev.trellis.graph.SurrogateSerializer
import dev.trellis.runtime.agent.PlainValue
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable

/**
 * One transfer of control in a [swarm]: agent [from] handed the conversation to agent [to], for [reason] (what the
 * model wrote in the handoff tool's `reason` argument, or what a [HandoffRule] gave).
 *
 * Each handoff is a custom event of the agent node that made it (`RunEvent.Custom` with this payload, path the
 * agent's name), as tool calls are (`AgentEvent.Step`), and is appended to [SwarmState.handoffs], so a run's
 * handoffs are in its state and checkpoints. A value: equal to another with the same properties.
 */
public class Handoff(
    /** The agent that had control. */
    public val from: String,
    /** The agent that has it now. */
    public val to: String,
    /** Why, in the words of the model or of the rule. */
    public val reason: String,
) : PlainValue() {
    override fun properties(): List<Pair<String, Any?>> = listOf("from" to from, "to" to to, "reason" to reason)

    /** The serializer. */
    public companion object {
        /** How handoffs are written in the state and its checkpoints: `{"from":…,"to":…,"reason":…}`. */
        @JvmStatic
        public fun serializer(): KSerializer<Handoff> = handoffSerializer
    }
}

/*
 * Handoff's form in the state and in checkpoints: the one it had as a `@Serializable` data class (same serial name,
 * properties and order), so the handoffs of runs saved before still decode.
 */
@Serializable
@SerialName("dev.trellis.langchain4j.Handoff")
private class HandoffForm(val from: String, val to: String, val reason: String)

private val handoffSerializer: KSerializer<Handoff> = SurrogateSerializer(
    HandoffForm.serializer(),
    { HandoffForm(it.from, it.to, it.reason) },
    { Handoff(it.from, it.to, it.reason) },
)

/**
 * What a [HandoffRule] decides: hand the conversation to agent [to], for [reason].
 *
 * ```kotlin
 * val rule = HandoffRule { messages ->
 *     val last = (messages.lastOrNull() as? Message.User)?.text.orEmpty()
 *     if ("invoice" in last) HandoffTarget("billing", "the user asks about an invoice") else null
 * }
 * ```
 *
 * A value: equal to another with the same properties.
 */
public class HandoffTarget(
    /** The name of the agent to hand the conversation to. */
    public val to: String,
    /** Why; recorded in the [Handoff] and told to the conversation. */
    public val reason: String,
) : PlainValue() {
    override fun properties(): List<Pair<String, Any?>> = listOf("to" to to, "reason" to reason)
}

/**
 * A handoff decided by code instead of by the model: called with the conversation when an agent of a [swarm] gets
 * control, before its model. A target hands the conversation over without calling the model; null lets the model
 * answer (an agent without a model must always hand over). It runs in the agent's node, on every execution, so it
 * should be a pure function of the conversation.
 */
public fun interface HandoffRule {
    /** The agent to hand [messages] to, or null to let this agent's model answer. */
    public fun decide(messages: List<Message>): HandoffTarget?
}

/**
 * Thrown when an agent of a [swarm] hands off after the run made its [maxHandoffs] handoffs (ping-pong between two
 * agents is the usual cause): the handoff is not made and the run fails.
 */
public class HandoffLimitExceededException(
    /** The swarm graph's id. */
    public val swarm: String,
    /** The limit: the most handoffs one run may make. */
    public val maxHandoffs: Int,
    /** The handoff refused. */
    public val refused: Handoff,
) : IllegalStateException(
        "Swarm '$swarm' made its $maxHandoffs handoffs (maxHandoffs) and agent '${refused.from}' hands off again, " +
            "to '${refused.to}' (${refused.reason}); raise maxHandoffs, or tell the agents (in their system prompts) " +
            "when to answer instead of handing off.",
    )
