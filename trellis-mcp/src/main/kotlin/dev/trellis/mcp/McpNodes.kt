package dev.trellis.mcp

import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.Retry
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.javaapi.NodeAction
import dev.trellis.langchain4j.Conversation
import dev.trellis.langchain4j.Message
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runInterruptible
import java.util.function.Function
import kotlin.time.Duration

/**
 * Declares a node [id] that reads the resource of [mcp] at the address [uri] gives for the state and writes its text
 * ([McpTools.readResource]) to [output]. The read is one execution of the node: retried by [retry], bounded by
 * [timeout] and the request timeout, checkpointed when it ends (a resumed run does not read it again). It runs on the
 * IO pool; a cancelled run interrupts it. Java: [McpActions.readResource].
 *
 * ```kotlin
 * val guide = mcpResourceNode("guide", docs, output = Desk.guide) { state -> "file:///guides/${state[Desk.topic]}.md" }
 * ```
 */
@JvmSynthetic
public fun GraphBuilder.mcpResourceNode(
    id: String,
    mcp: McpTools,
    output: StateKey<String>,
    timeout: Duration? = null,
    retry: Retry? = null,
    uri: (State) -> String,
): NodeRef = node(id, timeout, retry, "MCP resource") {
    val address = uri(state)
    set(output, runInterruptible(Dispatchers.IO) { mcp.readResource(address) })
}

/**
 * Declares a node [id] that gets prompt [name] of [mcp], filled with the [arguments] built from the state, and writes
 * its messages ([McpTools.prompt]) to [output]: a conversation key ([Conversation.key]) appends them, so a chat node
 * or an agent after it answers them. Retried, bounded and checkpointed like [mcpResourceNode].
 *
 * ```kotlin
 * val brief = mcpPromptNode("brief", docs, "summarize", output = Desk.messages) { state ->
 *     mapOf("topic" to state[Desk.topic])
 * }
 * ```
 */
@JvmSynthetic
public fun GraphBuilder.mcpPromptNode(
    id: String,
    mcp: McpTools,
    name: String,
    output: StateKey<List<Message>>,
    timeout: Duration? = null,
    retry: Retry? = null,
    arguments: (State) -> Map<String, String> = { emptyMap() },
): NodeRef = node(id, timeout, retry, "MCP prompt") {
    val values = arguments(state)
    set(output, runInterruptible(Dispatchers.IO) { mcp.prompt(name, values) })
}

/**
 * MCP resources and prompts for a Java `JavaGraph`: actions to declare with `blockingNode` (the read blocks its
 * thread, which the blocking node's executor provides and interrupts when the run is cancelled).
 *
 * ```java
 * builder.blockingNode("guide", McpActions.readResource(docs, guide, s -> "file:///guides/" + s.get(topic) + ".md"))
 *        .blockingNode("brief", McpActions.prompt(docs, "summarize", messages, s -> Map.of("topic", s.get(topic))));
 * ```
 */
public object McpActions {
    /** Reads the resource of [mcp] at the address [uri] gives for the state and writes its text to [output]. */
    @JvmStatic
    public fun readResource(mcp: McpTools, output: StateKey<String>, uri: Function<State, String>): NodeAction =
        NodeAction { context -> context.set(output, mcp.readResource(uri.apply(context.state))) }

    /**
     * Gets prompt [name] of [mcp], filled with the [arguments] built from the state, and writes its messages to
     * [output] (a conversation key appends them).
     */
    @JvmStatic
    public fun prompt(
        mcp: McpTools,
        name: String,
        output: StateKey<List<Message>>,
        arguments: Function<State, Map<String, String>>,
    ): NodeAction = NodeAction { context -> context.set(output, mcp.prompt(name, arguments.apply(context.state))) }
}
