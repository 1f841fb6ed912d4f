package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolSpecification
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.trellis.graph.Graph
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.runtime.agent.AgentEvent
import dev.trellis.runtime.agent.ReactAnswer
import dev.trellis.runtime.agent.ReactKeys
import dev.trellis.runtime.agent.reactGraph
import dev.trellis.runtime.agent.reactModelNode

/**
 * The state of a [reactAgent] graph: the [messages] of the conversation (start a run with the user's question
 * there), the [toolCalls] of the model's latest answer, the number of model calls made ([steps]) and the final
 * [answer].
 *
 * ```kotlin
 * val result = agent.invoke(stateOf(AgentState.messages to listOf(Message.User("Weather in Paris?"))))
 * println(result.state[AgentState.answer])
 * ```
 */
public object AgentState : StateSchema("react-agent") {
    /** The conversation: the input messages, then every model answer and tool result, in order. */
    @JvmField
    public val messages: StateKey<List<Message>> = Conversation.key(this, "messages")

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
 * Thrown when the model of a [reactAgent] (or a [supervisor]) still asks for tools at its last allowed step: no tool
 * of that answer runs.
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
 * the answer asks for tools, map node `tools` runs them (in parallel, each call a task, see [toolNode]) and the
 * model is called again with their results; the first answer without tool calls is written to
 * [AgentState.answer] and ends the run. At most [maxSteps] model calls: when the model still asks for tools at the
 * last one, the run fails with [StepBudgetExceededException]. Each model call charges its tokens to [meters], so a
 * `Budget` on them (`docs/semantics.md` §13.4) also stops the loop.
 *
 * Run it directly, or embed it in a larger graph as a subgraph node (its interrupts then have paths like
 * `agent/tools[0]`). From Java, [ReactAgent.builder].
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
): Graph = reactGraph({ chatMetered(model, it, meters) }, tools, maxSteps, system, id, toolRetry, maxParallelTools)

/**
 * A ReAct agent whose model streams: as the [reactAgent] over a `ChatModel`, and each token of every model call
 * becomes a custom event of node `model` (`AgentEvent.Token("model", text)`) as it arrives, with the backpressure
 * and cancellation of [streamingChatNode]. The tool calls of an answer are known when its stream completes; they
 * then run as map tasks, as for [reactAgent].
 *
 * ```kotlin
 * val agent = reactAgent(streamingModel, Tools.from(Weather()), maxSteps = 5)
 * agent.events(input).collect { (it as? RunEvent.Custom)?.payload?.let(::print) }
 * ```
 */
@JvmSynthetic
public fun reactAgent(
    model: StreamingChatModel,
    tools: Tools,
    maxSteps: Int = 10,
    system: String? = null,
    id: String = "react-agent",
    toolRetry: Retry? = null,
    maxParallelTools: Int = Int.MAX_VALUE,
    meters: TokenMeters = TokenMeters.DEFAULT,
): Graph = reactGraph(
    { request ->
        model.stream(request) { emit(AgentEvent.Token(nodeId, it)) }.also { meters.charge(it, ::charge) }
    },
    tools,
    maxSteps,
    system,
    id,
    toolRetry,
    maxParallelTools,
)

private fun reactGraph(
    call: ModelCall,
    tools: Tools,
    maxSteps: Int,
    system: String?,
    id: String,
    toolRetry: Retry?,
    maxParallelTools: Int,
): Graph = reactGraph(
    id,
    AgentState,
    agentKeys,
    maxSteps,
    { agentModelNode(id, call, tools.specifications, maxSteps, system) },
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
 * Declares node `model` of an agent graph [agent] over [AgentState] (the shared ReAct model node): calls the model
 * ([call]) with the conversation (after [system]) and [specifications]; tool calls at step [maxSteps] fail the call
 * with [StepBudgetExceededException].
 */
internal fun GraphBuilder.agentModelNode(
    agent: String,
    call: ModelCall,
    specifications: List<ToolSpecification>,
    maxSteps: Int,
    system: String?,
    id: String = "model",
): NodeRef = reactModelNode(
    agent,
    agentKeys,
    maxSteps,
    "model with tools ${specifications.map { it.name() }}",
    ::StepBudgetExceededException,
    id,
) { history ->
    val ai = callWithTools(call, specifications, history, system)
    ReactAnswer(ai, ai.text, ai.toolCalls, ai.toolCalls.map { it.name })
}

/**
 * Builds a [reactAgent] graph from Java.
 *
 * ```java
 * Graph agent = ReactAgent.builder(model).tools(Tools.from(new Weather())).maxSteps(5).build();
 * ```
 */
public class ReactAgent private constructor(
    private val model: ChatModel?,
    private val streamingModel: StreamingChatModel?,
) {
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
    public fun build(): Graph = if (model != null) {
        reactAgent(model, tools, maxSteps, system, id, null, maxParallelTools, meters)
    } else {
        reactAgent(streamingModel!!, tools, maxSteps, system, id, null, maxParallelTools, meters)
    }

    /** Starts a builder. */
    public companion object {
        /** A builder of a ReAct agent over [model]. */
        @JvmStatic
        public fun builder(model: ChatModel): ReactAgent = ReactAgent(model, null)

        /** A builder of a ReAct agent over a streaming [model]: each token is an event (see [reactAgent]). */
        @JvmStatic
        public fun builder(model: StreamingChatModel): ReactAgent = ReactAgent(null, model)
    }
}
