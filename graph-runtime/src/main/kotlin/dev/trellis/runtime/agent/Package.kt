/*
 * Package dev.trellis.runtime.agent — agents as graph nodes (`docs/agents.md`): what an agent is and how it is kept
 * isolated between calls, by sessions or snapshot and restore (`Agent.kt`, `AgentSnapshot.kt`), the node that calls
 * one (`AgentNode.kt`), its input and scope (`AgentInput.kt`, `AgentScope.kt`) and its events (`AgentEvent.kt`).
 *
 * It also holds the one implementation of what the model adapters (`trellis-langchain4j`, `trellis-spring-ai`) have in
 * common, over their message and tool call types: the ReAct loop (`ReactLoop.kt`), tool calls as map tasks
 * (`ToolTasks.kt`), the stored form of chat messages (`StoredMessages.kt`), the token meters (`TokenMeterSet.kt`) and
 * the base of their plain value classes (`PlainValue.kt`). An adapter keeps only the conversion between its client's
 * types and these.
 *
 * May call: the graph DSL only; it builds on the public API like a user would.
 */
package dev.trellis.runtime.agent
