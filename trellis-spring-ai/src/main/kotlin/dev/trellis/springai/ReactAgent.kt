package dev.trellis.springai

import dev.trellis.graph.Graph
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.runtime.agent.ReactAnswer
import dev.trellis.runtime.agent.ReactKeys
import dev.trellis.runtime.agent.reactGraph
import dev.trellis.runtime.agent.reactModelNode
import org.springframework.ai.chat.model.ChatModel

/**
 * The state of a [reactAgent] graph: the [messages] of the conversation (start a run with the user's question
 * there), the [toolCalls] of the model's latest answer, the number of model calls made ([steps]) and the final
 * [answer].
 */
public object AgentState : StateSchema("spring-ai-agent") {
    /** The conversation: the input messages, then every model answer and tool result, in order. */
    @JvmField
    public val messages: StateKey<List<StoredMessage>> = Conversation.key(this, "messages")

    /** The tool calls of the model's latest answer; empty once it answered. */
    @JvmField
    public val toolCalls: StateKey<List<ToolCall>> = key("toolCalls", emptyList())

    /** How many times the model was called in this run. */
    @JvmField
    public val steps: StateKey<Int> = key("steps", 0)

    /** The text of the model's final answer (the first without tool calls). */
    @JvmField
    public val answer: StateKey<String> = key("answer", "")
}

/**
 * Thrown when the model of a [reactAgent] still asks for tools at its last allowed step: no tool of that answer runs.
 */
public class StepBudgetExceededException(
    /** The agent graph's id. */
    public val agent: String,
    /** The budget: the most model calls one run may make. */
    public val maxSteps: Int,
    /** The tools the model asked for at its last step. */
    public val requested: List<String>,
) : IllegalStateException(
        "Agent '$agent' made its $maxSteps model calls (maxSteps) and the model still asks for tools " +
            "$requested; raise maxSteps, or tell the model (in the system prompt) to answer with what it has.",
    )

/**
 * A ReAct agent as a graph over [AgentState]: node `model` calls [model] with the conversation and [tools]; while
 * the answer asks for tools, map node `tools` runs them (in parallel, each call a task, see [toolNode]) and the model
 * is called again with their results; the first answer without tool calls is written to [AgentState.answer] and ends
 * the run. At most [maxSteps] model calls: when the model still asks for tools at the last one, the run fails with
 * [StepBudgetExceededException]. Each call charges its tokens to [meters], so a `Budget` on them also stops the loop.
 * From Java, [ReactAgent.builder].
 *
 * ```kotlin
 * val agent = reactAgent(model, Tools.from(Weather()), maxSteps = 5, system = "Use the tools; be brief.")
 * ```
 */
@JvmSynthetic
public fun reactAgent(
    model: ChatModel,
    tools: Tools,
    maxSteps: Int = 10,
    system: String? = null,
    id: String = "react-agent",
    toolRetry: Retry? = null,
    maxParallelTools: Int = Int.MAX_VALUE,
    meters: TokenMeters = TokenMeters.DEFAULT,
): Graph = reactGraph(ModelSource.OfModel(model), tools, maxSteps, system, id, toolRetry, maxParallelTools, meters)

private fun reactGraph(
    source: ModelSource,
    tools: Tools,
    maxSteps: Int,
    system: String?,
    id: String,
    toolRetry: Retry?,
    maxParallelTools: Int,
    meters: TokenMeters,
): Graph = reactGraph(
    id,
    AgentState,
    agentKeys,
    maxSteps,
    {
        reactModelNode(id, agentKeys, maxSteps, "model with tools ${tools.names}", ::StepBudgetExceededException) {
            val ai = callWithTools(source, tools, it, system, meters)
            ReactAnswer(ai, ai.text, ai.toolCalls, ai.toolCalls.map { call -> call.name })
        }
    },
    {
        toolNode(
            "tools",
            tools,
            AgentState.toolCalls,
            AgentState.messages,
            maxConcurrency = maxParallelTools,
            retry = toolRetry,
        )
    },
)

private val agentKeys = ReactKeys(AgentState.messages, AgentState.toolCalls, AgentState.steps, AgentState.answer)

/**
 * Builds a [reactAgent] graph from Java.
 *
 * ```java
 * Graph agent = ReactAgent.builder(chatModel).tools(Tools.from(new Weather())).maxSteps(5).build();
 * ```
 */
public class ReactAgent private constructor(private val source: ModelSource) {
    private var tools: Tools = Tools.builder().build()
    private var maxSteps = 10
    private var system: String? = null
    private var id = "react-agent"
    private var maxParallelTools = Int.MAX_VALUE
    private var meters = TokenMeters.DEFAULT

    /** The tools the model may call (none by default). */
    public fun tools(tools: Tools): ReactAgent = apply { this.tools = tools }

    /** The most model calls one run may make (10 by default). */
    public fun maxSteps(maxSteps: Int): ReactAgent = apply { this.maxSteps = maxSteps }

    /** The system prompt, sent before the conversation on every call (none by default). */
    public fun system(system: String?): ReactAgent = apply { this.system = system }

    /** The graph's id ("react-agent" by default). */
    public fun id(id: String): ReactAgent = apply { this.id = id }

    /** How many tool calls of one answer run at once (all by default). */
    public fun maxParallelTools(max: Int): ReactAgent = apply { maxParallelTools = max }

    /** The budget meters each model call charges ([TokenMeters.DEFAULT] by default). */
    public fun meters(meters: TokenMeters): ReactAgent = apply { this.meters = meters }

    /** The agent's graph. */
    public fun build(): Graph = reactGraph(source, tools, maxSteps, system, id, null, maxParallelTools, meters)

    /** Starts a builder. */
    public companion object {
        /** A builder of a ReAct agent over [model]. */
        @JvmStatic
        public fun builder(model: ChatModel): ReactAgent = ReactAgent(ModelSource.OfModel(model))
    }
}
