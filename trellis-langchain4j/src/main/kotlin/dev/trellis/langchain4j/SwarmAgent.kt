package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolSpecification
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.request.json.JsonObjectSchema

/**
 * An agent of a [swarm]: a [name] (its node's id), a [description] (what the other agents read in its handoff
 * tool), a model with its own [tools] and [system] prompt, the agents it may hand the conversation to
 * ([handoffsTo]; all the others when null) and an optional [rule] that hands over before the model is called.
 *
 * The model is offered one handoff tool per agent it may hand to, `transfer_to_<name>`, with one argument, `reason`.
 * An agent with a [rule] and no model is a pure router: its rule must always hand over.
 *
 * ```kotlin
 * val billing = SwarmAgent.of("billing", "invoices, refunds and payments", model, system = "You handle billing.")
 * ```
 */
public class SwarmAgent private constructor(
    /** The agent's name: its node's id in the swarm and, after `transfer_to_`, its handoff tool's name. */
    public val name: String,
    /** What the agent handles, as the other agents' models read it. */
    public val description: String,
    internal val model: ChatModel?,
    internal val tools: Tools,
    internal val system: String?,
    /** The agents this one may hand to, or null for all the others. */
    public val handoffsTo: List<String>?,
    internal val rule: HandoffRule?,
) {
    init {
        require(name.matches(NAME)) {
            "Swarm agent name '$name' is not usable in a tool name; use letters, digits, '_' and '-' only (at most 52)."
        }
        require(model != null || rule != null) {
            "Swarm agent '$name' has neither a model nor a handoff rule; give it a model, or a rule that hands over."
        }
        val clash = tools.names.filter { it.startsWith(HANDOFF_PREFIX) }
        require(clash.isEmpty()) {
            "Swarm agent '$name' has tools $clash whose names start with '$HANDOFF_PREFIX', the prefix of handoff " +
                "tools; rename them."
        }
    }

    /** The handoff tool that gives the conversation to this agent. */
    internal val handoffTool: ToolSpecification =
        ToolSpecification.builder()
            .name(HANDOFF_PREFIX + name)
            .description("Hand the conversation to agent '$name', which handles: $description")
            .parameters(
                JsonObjectSchema.builder()
                    .addStringProperty("reason", "why this agent should take over, in one sentence")
                    .required("reason")
                    .build(),
            ).build()

    override fun toString(): String = "SwarmAgent($name)"

    /**
     * Builds a [SwarmAgent] from Java.
     *
     * ```java
     * SwarmAgent billing = SwarmAgent.builder("billing", "invoices and refunds").model(model).system("…").build();
     * ```
     */
    public class Builder internal constructor(private val name: String, private val description: String) {
        private var model: ChatModel? = null
        private var tools: Tools = Tools.builder().build()
        private var system: String? = null
        private var handoffsTo: List<String>? = null
        private var rule: HandoffRule? = null

        /** The agent's model (none by default: then a [rule] must hand over). */
        public fun model(model: ChatModel): Builder = apply { this.model = model }

        /** The agent's own tools, besides its handoff tools (none by default). */
        public fun tools(tools: Tools): Builder = apply { this.tools = tools }

        /** The agent's system prompt (none by default). */
        public fun system(system: String?): Builder = apply { this.system = system }

        /** The only agents this one may hand to (all the others by default). */
        public fun handoffsTo(vararg names: String): Builder = apply { handoffsTo = names.toList() }

        /** A rule that may hand over before the model is called. */
        public fun rule(rule: HandoffRule): Builder = apply { this.rule = rule }

        /** The agent. */
        public fun build(): SwarmAgent = SwarmAgent(name, description, model, tools, system, handoffsTo, rule)
    }

    /** Makes swarm agents. */
    public companion object {
        /** The start of every handoff tool's name: `transfer_to_billing`. */
        public const val HANDOFF_PREFIX: String = "transfer_to_"

        private val NAME = Regex("[a-zA-Z0-9_-]{1,52}")

        /** An agent answering with [model]; see [SwarmAgent]. */
        @JvmStatic
        @JvmOverloads
        public fun of(
            name: String,
            description: String,
            model: ChatModel,
            tools: Tools = Tools.builder().build(),
            system: String? = null,
            handoffsTo: List<String>? = null,
            rule: HandoffRule? = null,
        ): SwarmAgent = SwarmAgent(name, description, model, tools, system, handoffsTo, rule)

        /** An agent without a model whose [rule] always hands over: a router by code. */
        @JvmStatic
        public fun router(name: String, description: String, rule: HandoffRule): SwarmAgent =
            SwarmAgent(name, description, null, Tools.builder().build(), null, null, rule)

        /** A builder of an agent named [name] that handles [description]. */
        @JvmStatic
        public fun builder(name: String, description: String): Builder = Builder(name, description)
    }
}
