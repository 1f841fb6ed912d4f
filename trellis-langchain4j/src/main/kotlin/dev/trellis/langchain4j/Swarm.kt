package dev.trellis.langchain4j

import dev.langchain4j.model.chat.ChatModel
import dev.trellis.graph.Graph
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/**
 * The state of a [swarm]: the shared conversation ([messages]), the agent that has control ([activeAgent]), the
 * run's [handoffs], the [toolCalls] of the latest answer, the model calls made ([steps]) and the final [answer].
 *
 * The active agent is state: it is in every checkpoint, so a resumed run goes on with the agent that had control,
 * and a next run given the previous run's [messages] and [activeAgent] continues the conversation with that agent.
 */
public object SwarmState : StateSchema("swarm") {
    /** The conversation every agent reads and appends to, handoff calls and their results included. */
    @JvmField
    public val messages: StateKey<List<Message>> = Conversation.key(this, "messages")

    /** The name of the agent that has control; empty until the swarm's default agent takes it. */
    @JvmField
    public val activeAgent: StateKey<String> = key("activeAgent", "")

    /** The handoffs made, in order (appended to). */
    @JvmField
    public val handoffs: StateKey<List<Handoff>> =
        key("handoffs", ListSerializer(Handoff.serializer()), List::class.java, false, emptyList(), Reducer.append())

    /** The tool calls (handoffs excluded) of the latest answer; empty once an agent answered. */
    @JvmField
    public val toolCalls: StateKey<List<ToolCall>> = key("toolCalls", emptyList())

    /** How many model calls the run made, all agents together. */
    @JvmField
    public val steps: StateKey<Int> = key("steps", 0)

    /** The text of the final answer: the first answer of the active agent without tool or handoff calls. */
    @JvmField
    public val answer: StateKey<String> = key("answer", "")
}

/**
 * A swarm as a graph over [SwarmState]: agents that hand the conversation to each other. Node `dispatch` gives control
 * to [SwarmState.activeAgent] (or to [defaultAgent] when it is empty); each agent is a node named after it that
 * calls its model with the whole conversation, its own system prompt, its tools and one handoff tool per agent it
 * may hand to (`transfer_to_billing`, argument `reason`). Then:
 *
 * - a **handoff** call (or its [HandoffRule]'s target, before the model) makes the target the active agent, appends a
 *   [Handoff] to [SwarmState.handoffs], emits it as a custom event of the agent's node, answers the call in the
 *   conversation (`Transferred to billing: …`; other calls of that answer get `Not run: …`) and runs the target's
 *   node next; the handoff beyond [maxHandoffs] fails the run with [HandoffLimitExceededException];
 * - **tool** calls run as map tasks of the agent's tool node (`billing-tools`, see [toolNode]), then the same agent
 *   is called again;
 * - an answer without calls is [SwarmState.answer] and ends the run.
 *
 * At most [maxSteps] model calls in a run, all agents together ([StepBudgetExceededException]); each charges its
 * tokens to [meters].
 *
 * ```kotlin
 * val support = swarm(listOf(triage, billing, tech), maxHandoffs = 3)
 * val result = support.invoke(stateOf(SwarmState.messages to listOf(Message.User("I was charged twice"))))
 * ```
 *
 * From Java: [Swarm.builder].
 */
@JvmSynthetic
public fun swarm(
    agents: List<SwarmAgent>,
    defaultAgent: String = agents.first().name,
    maxHandoffs: Int = 5,
    maxSteps: Int = 20,
    id: String = "swarm",
    meters: TokenMeters = TokenMeters.DEFAULT,
): Graph {
    val names = agents.map { it.name }
    require(names.toSet().size == names.size) { "Two agents of swarm '$id' have the same name: $names." }
    val taken = names.filter { it == "dispatch" || "$it-tools" in names }
    require(taken.isEmpty()) {
        "Agents $taken of swarm '$id' are named like the swarm's own nodes ('dispatch', '<agent>-tools'); rename them."
    }
    require(defaultAgent in names) { "Swarm '$id' has no agent '$defaultAgent' to start with; its agents are $names." }
    require(maxHandoffs >= 0) { "maxHandoffs is $maxHandoffs; give 0 or more." }
    require(maxSteps >= 1) { "maxSteps is $maxSteps; a swarm needs at least 1 model call." }
    for (agent in agents) {
        val unknown = agent.handoffsTo.orEmpty().filter { it !in names || it == agent.name }
        require(unknown.isEmpty()) {
            "Agent '${agent.name}' of swarm '$id' hands off to $unknown, which are not other agents of the " +
                "swarm $names."
        }
    }
    val limits = SwarmLimits(id, maxHandoffs, maxSteps, meters)
    return graph(id, SwarmState) {
        val dispatch =
            node("dispatch", description = "gives control to the active agent") {
                val active = get(SwarmState.activeAgent).ifEmpty { defaultAgent }
                require(active in names) {
                    "Swarm '$id' was started with active agent '$active', which is not among its agents $names."
                }
                set(SwarmState.activeAgent, active)
            }
        val nodes = agents.associate { agent ->
            val targets = agent.handoffsTo ?: (names - agent.name)
            agent.name to swarmAgentNode(agent, agents.filter { it.name in targets }, limits)
        }
        start(dispatch)
        dispatch.route(*nodes.values.toTypedArray()) { nodes.getValue(it[SwarmState.activeAgent]) }
        for (agent in agents) {
            val node = nodes.getValue(agent.name)
            val targets = (agent.handoffsTo ?: (names - agent.name)).map { nodes.getValue(it) }
            val tools =
                if (agent.tools.names.isEmpty()) {
                    null
                } else {
                    toolNode("${agent.name}-tools", agent.tools, SwarmState.toolCalls, SwarmState.messages)
                        .also { it then node }
                }
            node.route(*(targets + listOfNotNull(tools) + END).toTypedArray()) { state ->
                val active = state[SwarmState.activeAgent]
                when {
                    active != agent.name -> nodes.getValue(active)
                    state[SwarmState.toolCalls].isNotEmpty() -> tools!!
                    else -> END
                }
            }
        }
        config { maxNodeExecutions = maxOf(maxNodeExecutions, 2 * maxSteps + 2 * maxHandoffs + 2) }
    }
}

private class SwarmLimits(val id: String, val maxHandoffs: Int, val maxSteps: Int, val meters: TokenMeters)

private fun GraphBuilder.swarmAgentNode(agent: SwarmAgent, targets: List<SwarmAgent>, limits: SwarmLimits): NodeRef {
    val handoffTools = targets.associate { it.handoffTool.name() to it.name }
    val specifications = agent.tools.specifications + targets.map { it.handoffTool }
    return node(agent.name, description = "swarm agent; hands off to ${targets.map { it.name }}") {
        val ruled = agent.rule?.decide(get(SwarmState.messages))
        if (ruled != null) {
            require(ruled.to in handoffTools.values) {
                "The handoff rule of agent '${agent.name}' hands to '${ruled.to}', which is not among the agents " +
                    "it may hand to ${handoffTools.values}."
            }
            handOff(Handoff(agent.name, ruled.to, ruled.reason), limits)
            set(SwarmState.messages, listOf(Message.Ai("Transferring to ${ruled.to}: ${ruled.reason}")))
            set(SwarmState.toolCalls, emptyList())
            return@node
        }
        val model: ChatModel =
            agent.model ?: throw IllegalStateException(
                "Agent '${agent.name}' of swarm '${limits.id}' has no model and its handoff rule did not hand " +
                    "over; make the rule always return a target, or give the agent a model.",
            )
        val step = get(SwarmState.steps) + 1
        set(SwarmState.steps, step)
        val call: ModelCall = { chatMetered(model, it, limits.meters) }
        val ai = callWithTools(call, specifications, get(SwarmState.messages), agent.system)
        val handoffCall = ai.toolCalls.firstOrNull { it.name in handoffTools }
        when {
            handoffCall != null -> {
                val target = handoffTools.getValue(handoffCall.name)
                val reason = reasonOf(handoffCall)
                handOff(Handoff(agent.name, target, reason), limits)
                val results = ai.toolCalls.map {
                    val text =
                        if (it === handoffCall) "Transferred to $target: $reason" else "Not run: handed to $target."
                    Message.ToolResult(it.id, it.name, text)
                }
                set(SwarmState.messages, listOf(ai) + results)
                set(SwarmState.toolCalls, emptyList())
            }
            ai.toolCalls.isNotEmpty() -> {
                if (step >= limits.maxSteps) {
                    throw StepBudgetExceededException(limits.id, limits.maxSteps, ai.toolCalls.map { it.name })
                }
                set(SwarmState.messages, listOf(ai))
                set(SwarmState.toolCalls, ai.toolCalls)
            }
            else -> {
                set(SwarmState.messages, listOf(ai))
                set(SwarmState.toolCalls, emptyList())
                set(SwarmState.answer, ai.text.orEmpty())
            }
        }
    }
}

/** Makes [handoff] unless the run made its handoffs already: records it, emits it and gives control to its target. */
private suspend fun NodeScope.handOff(handoff: Handoff, limits: SwarmLimits) {
    if (get(SwarmState.handoffs).size >= limits.maxHandoffs) {
        throw HandoffLimitExceededException(limits.id, limits.maxHandoffs, handoff)
    }
    emit(handoff)
    set(SwarmState.handoffs, listOf(handoff))
    set(SwarmState.activeAgent, handoff.to)
}

/** The `reason` argument of a handoff call; the whole arguments when they are not a JSON object with a `reason`. */
private fun reasonOf(call: ToolCall): String =
    runCatching { (Json.parseToJsonElement(call.arguments) as JsonObject)["reason"] as JsonPrimitive }
        .map { it.content }
        .getOrDefault(call.arguments)

/**
 * Builds a [swarm] graph from Java.
 *
 * ```java
 * Graph support = Swarm.builder().agent(triage).agent(billing).agent(tech).maxHandoffs(3).build();
 * ```
 */
public class Swarm private constructor() {
    private val agents = ArrayList<SwarmAgent>()
    private var defaultAgent: String? = null
    private var maxHandoffs = 5
    private var maxSteps = 20
    private var id = "swarm"
    private var meters = TokenMeters.DEFAULT

    /** Adds an agent; the first added is the default agent unless [defaultAgent] names another. */
    public fun agent(agent: SwarmAgent): Swarm = apply { agents += agent }

    /** The agent that has control when a run starts without an active agent (the first added by default). */
    public fun defaultAgent(name: String): Swarm = apply { defaultAgent = name }

    /** The most handoffs one run may make (5 by default). */
    public fun maxHandoffs(max: Int): Swarm = apply { maxHandoffs = max }

    /** The most model calls one run may make, all agents together (20 by default). */
    public fun maxSteps(max: Int): Swarm = apply { maxSteps = max }

    /** The graph's id ("swarm" by default). */
    public fun id(id: String): Swarm = apply { this.id = id }

    /** The budget meters each model call charges ([TokenMeters.DEFAULT] by default). */
    public fun meters(meters: TokenMeters): Swarm = apply { this.meters = meters }

    /** The swarm's graph. */
    public fun build(): Graph {
        require(agents.isNotEmpty()) { "Swarm '$id' has no agents; add at least one with agent(…)." }
        return swarm(agents.toList(), defaultAgent ?: agents.first().name, maxHandoffs, maxSteps, id, meters)
    }

    /** Starts a builder. */
    public companion object {
        /** A builder of a swarm. */
        @JvmStatic
        public fun builder(): Swarm = Swarm()
    }
}
