package dev.trellis.runtime.agent

import dev.trellis.graph.Graph
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph

/*
 * The ReAct loop, the one implementation of the model adapters' agents (`trellis-langchain4j`, `trellis-spring-ai`):
 * the model node and the graph of model and tools, over the adapter's message [M] and tool call [C] types and a model
 * call it gives.
 */

/** The state keys of a ReAct loop, in an adapter's types: conversation, pending tool calls, steps, final answer. */
@InternalTrellisApi
public class ReactKeys<M, C>(
    /** The conversation. */
    public val messages: StateKey<List<M>>,
    /** The tool calls of the latest answer. */
    public val toolCalls: StateKey<List<C>>,
    /** How many model calls were made. */
    public val steps: StateKey<Int>,
    /** The text of the final answer. */
    public val answer: StateKey<String>,
)

/** One answer of the model: the [message] appended to the conversation, its [text] and its [toolCalls]. */
@InternalTrellisApi
public class ReactAnswer<M, C>(
    /** The answer as the conversation keeps it. */
    public val message: M,
    /** The answer's text, null when the model only called tools. */
    public val text: String?,
    /** The tool calls the model asks for. */
    public val toolCalls: List<C>,
    /** The names of the tools called, in order. */
    public val toolNames: List<String>,
)

/**
 * Declares the model node [id] of agent [agent]: [call] answers the conversation; the answer is appended, its tool
 * calls written and the step counted, and its text written to the answer key when it calls no tool. Tool calls at
 * step [maxSteps] fail the node with [budgetExceeded]`(agent, maxSteps, tool names)`, and no tool runs.
 */
@InternalTrellisApi
public fun <M, C> GraphBuilder.reactModelNode(
    agent: String,
    keys: ReactKeys<M, C>,
    maxSteps: Int,
    description: String,
    budgetExceeded: (agent: String, maxSteps: Int, requested: List<String>) -> Throwable,
    id: String = "model",
    call: suspend NodeScope.(List<M>) -> ReactAnswer<M, C>,
): NodeRef = node(id, description = description) {
    val step = get(keys.steps) + 1
    val ai = call(get(keys.messages))
    if (ai.toolCalls.isNotEmpty() && step >= maxSteps) throw budgetExceeded(agent, maxSteps, ai.toolNames)
    set(keys.messages, listOf(ai.message))
    set(keys.toolCalls, ai.toolCalls)
    set(keys.steps, step)
    if (ai.toolCalls.isEmpty()) set(keys.answer, ai.text.orEmpty())
}

/**
 * The ReAct graph [id] over [schema]: [modelNode] starts; while its answer has tool calls ([keys]), [toolNode] runs
 * them and the model is called again; an answer without tool calls ends the run. Allows the `2 * maxSteps + 1` node
 * executions the loop needs.
 */
@InternalTrellisApi
public fun <M, C> reactGraph(
    id: String,
    schema: StateSchema,
    keys: ReactKeys<M, C>,
    maxSteps: Int,
    modelNode: GraphBuilder.() -> NodeRef,
    toolNode: GraphBuilder.() -> NodeRef,
): Graph {
    require(maxSteps >= 1) { "maxSteps is $maxSteps; a ReAct agent needs at least 1 model call." }
    return graph(id, schema) {
        val callModel = modelNode()
        val runTools = toolNode()
        start(callModel)
        callModel.route(runTools, END) { if (it[keys.toolCalls].isEmpty()) END else runTools }
        runTools then callModel
        config { maxNodeExecutions = maxOf(maxNodeExecutions, 2 * maxSteps + 1) }
    }
}
