package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolSpecification
import dev.langchain4j.data.message.ChatMessage
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.StreamingChatModel
import dev.langchain4j.model.chat.request.ChatRequest
import dev.langchain4j.model.chat.response.ChatResponse
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Retry
import dev.trellis.graph.StateKey
import dev.trellis.runtime.agent.runTool
import dev.trellis.runtime.agent.toolApprovalQuestion
import dev.trellis.runtime.agent.toolTasks
import kotlin.time.Duration

/**
 * Declares a node [id] that sends the [conversation] (after the [system] prompt, when given) and the [tools]'
 * specifications to [model], appends the answer to [conversation] and writes the tool calls it asks for to
 * [toolCalls] (empty when it answered). Wire it to a [toolNode] over [toolCalls] and back: that is the loop
 * [reactAgent] builds. The response's tokens are charged to [meters] ([TokenMeters]).
 */
@JvmSynthetic
public fun GraphBuilder.toolCallingChatNode(
    id: String,
    model: ChatModel,
    tools: Tools,
    conversation: StateKey<List<Message>>,
    toolCalls: StateKey<List<ToolCall>>,
    system: String? = null,
    timeout: Duration? = null,
    retry: Retry? = null,
    description: String? = null,
    meters: TokenMeters = TokenMeters.DEFAULT,
    onAnswer: (NodeScope.(Message.Ai) -> Unit)? = null,
): NodeRef = node(id, timeout, retry, description ?: "model with tools ${tools.names}") {
    val ai = callWithTools({ chatMetered(model, it, meters) }, tools.specifications, get(conversation), system)
    set(conversation, listOf(ai))
    set(toolCalls, ai.toolCalls)
    onAnswer?.invoke(this, ai)
}

/** How an agent's node calls its model: a [ChatModel], or a [StreamingChatModel] whose tokens become events. */
internal typealias ModelCall = suspend NodeScope.(ChatRequest) -> ChatResponse

internal suspend fun NodeScope.callWithTools(
    call: ModelCall,
    specifications: List<ToolSpecification>,
    history: List<Message>,
    system: String?,
): Message.Ai {
    val messages = ArrayList<ChatMessage>(history.size + 1)
    if (system != null) messages += Message.System(system).toChatMessage()
    history.mapTo(messages) { it.toChatMessage() }
    val request = ChatRequest.builder().messages(messages)
    if (specifications.isNotEmpty()) request.toolSpecifications(specifications)
    return Message.of(call(request.build()).aiMessage()) as Message.Ai
}

/**
 * Declares a tool node [id]: a map node (`docs/semantics.md` §11) that runs each tool call in [toolCalls] as a task
 * of its own — in parallel up to [maxConcurrency] — and appends the results to [conversation] as
 * [Message.ToolResult]s, in the order of the calls.
 *
 * Each call is a task with its own `NodeStarted` … end events (path `tools[2]`), a custom event
 * `AgentEvent.Step(id, "name(arguments)")` before the tool runs, [retry] and [timeout] per call, and, with
 * checkpointing, its own durable record when it ends: a run stopped (crash, cancel, drain) after some calls ended
 * runs only the others on resume, so a completed tool call never runs again. A tool that requires approval
 * ([Tools.Builder.requireApproval]) interrupts its task with a question; an answer other than `yes` skips the tool
 * and tells the model it was refused. Tools run on the IO pool, interrupted when cancelled.
 */
@JvmSynthetic
public fun GraphBuilder.toolNode(
    id: String,
    tools: Tools,
    toolCalls: StateKey<List<ToolCall>>,
    conversation: StateKey<List<Message>>,
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
    runToolCall(id, tools, it)
}

internal suspend fun NodeScope.runToolCall(node: String, tools: Tools, call: ToolCall): Message.ToolResult =
    Message.ToolResult(
        call.id,
        call.name,
        runTool(node, call.name, call.arguments, tools.requiresApproval(call.name)) {
            tools.execute(call)
        },
    )

/** The question a tool that requires approval asks; answer `yes` to run it. */
public fun approvalQuestion(call: ToolCall): String = toolApprovalQuestion(call.name, call.arguments)
