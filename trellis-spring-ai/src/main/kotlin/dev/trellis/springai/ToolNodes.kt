package dev.trellis.springai

import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import dev.trellis.runtime.agent.runTool
import dev.trellis.runtime.agent.toolApprovalQuestion
import dev.trellis.runtime.agent.toolTasks
import org.springframework.ai.chat.messages.Message
import org.springframework.ai.chat.model.ChatModel
import org.springframework.ai.chat.prompt.Prompt
import org.springframework.ai.model.tool.ToolCallingChatOptions
import kotlin.time.Duration

/**
 * Declares a node [id] that sends the [conversation] (after the [system] prompt, when given) and the [tools]'
 * definitions to [model], appends the answer to [conversation] and writes the tool calls it asks for to [toolCalls]
 * (empty when it answered). A Spring AI 2 `ChatModel` returns the tool calls and runs none (a `ChatClient` would run
 * them in its tool-calling advisor, so tools take a model): wire the node to a [toolNode] over [toolCalls] and back,
 * the loop [reactAgent] builds. The response's tokens are charged to [meters]. From Java, [ReactAgent.builder] builds
 * the loop.
 */
@JvmSynthetic
public fun GraphBuilder.toolCallingChatNode(
    id: String,
    model: ChatModel,
    tools: Tools,
    conversation: StateKey<List<StoredMessage>>,
    toolCalls: StateKey<List<ToolCall>>,
    system: String? = null,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    onAnswer: (NodeScope.(StoredMessage.Ai) -> Unit)? = null,
): NodeRef = toolCalling(
    id,
    ModelSource.OfModel(model),
    tools,
    conversation,
    toolCalls,
    system,
    timeout,
    retry,
    description,
    meters,
    onAnswer,
)

private fun GraphBuilder.toolCalling(
    id: String,
    source: ModelSource,
    tools: Tools,
    conversation: StateKey<List<StoredMessage>>,
    toolCalls: StateKey<List<ToolCall>>,
    system: String?,
    timeout: Duration?,
    retry: Retry?,
    description: String?,
    meters: TokenMeters,
    onAnswer: (NodeScope.(StoredMessage.Ai) -> Unit)?,
): NodeRef = node(id, timeout, retry, description ?: "model with tools ${tools.names}") {
    val ai = callWithTools(source, tools, get(conversation), system, meters)
    set(conversation, listOf(ai))
    set(toolCalls, ai.toolCalls)
    onAnswer?.invoke(this, ai)
}

/** Calls the model with the conversation and the tools' definitions; charges its tokens; returns its answer. */
internal suspend fun NodeScope.callWithTools(
    source: ModelSource,
    tools: Tools,
    history: List<StoredMessage>,
    system: String?,
    meters: TokenMeters,
): StoredMessage.Ai {
    val messages = ArrayList<Message>(history.size + 1)
    if (system != null) messages += StoredMessage.System(system).toMessage()
    history.mapTo(messages) { it.toMessage() }
    val options = ToolCallingChatOptions.builder().toolCallbacks(tools.callbacks).build()
    val response = source.callSuspending(Prompt(messages, options))
    meters.charge(response, ::charge)
    return StoredMessage.answer(response.answerOf(nodeId))
}

/**
 * Declares a tool node [id]: a map node (`docs/semantics.md` §11) that runs each tool call in [toolCalls] as a task
 * of its own — in parallel up to [maxConcurrency] — and appends the results to [conversation] as
 * [StoredMessage.ToolResult]s, in the order of the calls.
 *
 * Each call is a task with its own `NodeStarted` … end events (path `tools[2]`), a custom event
 * `AgentEvent.Step(id, "name(arguments)")` before the tool runs, [retry] and [timeout] per call, and, with
 * checkpointing, its own durable record when it ends: a run stopped (crash, cancel, drain) after some calls ended
 * runs only the others on resume, so a completed tool call never runs again. A tool that requires approval
 * ([Tools.Builder.requireApproval]) interrupts its task with a question ([approvalQuestion]); an answer other than
 * `yes` skips the tool and tells the model it was refused. Tools run on the IO pool, interrupted when cancelled.
 * From Java, [ReactAgent.builder] builds the loop of a model and its tools.
 */
@JvmSynthetic
public fun GraphBuilder.toolNode(
    id: String,
    tools: Tools,
    toolCalls: StateKey<List<ToolCall>>,
    conversation: StateKey<List<StoredMessage>>,
    maxConcurrency: Int = Int.MAX_VALUE,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
): NodeRef = toolTasks(
    id,
    toolCalls,
    conversation,
    maxConcurrency,
    timeout,
    retry,
    description ?: "tools ${tools.names}",
) {
    call ->
    StoredMessage.ToolResult(
        call.id,
        call.name,
        runTool(id, call.name, call.arguments, tools.requiresApproval(call.name)) {
            tools.execute(call)
        },
    )
}

/** The question a tool that requires approval asks; answer `yes` to run it. */
public fun approvalQuestion(call: ToolCall): String = toolApprovalQuestion(call.name, call.arguments)
