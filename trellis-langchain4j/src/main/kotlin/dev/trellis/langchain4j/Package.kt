/*
 * Package dev.trellis.langchain4j — agents on LangChain4j models (`docs/agents.md`): chat nodes (`ChatNode.kt`,
 * `ChatCalls.kt`, `ChatActions.kt` for Java), tools and tool calls as map tasks (`Tools.kt`, `ToolNodes.kt`; the
 * tools of MCP servers are in the `trellis-mcp` module, package `dev.trellis.mcp`), agent graphs (`ReactAgent.kt`,
 * `RouterNode.kt`, `Supervisor.kt`, `Voting.kt`, `Synthesizer.kt`), agents that hand the conversation to each other
 * (`Swarm.kt`, `SwarmAgent.kt`, `Handoff.kt`), conversation memory in the state (`Conversation.kt`, `Message.kt`,
 * `MessageSerializers.kt`, `Memory.kt`, `JdbcConversationMemory.kt`) and token usage (`Usage.kt`).
 *
 * May call: the runtime's public API and LangChain4j.
 */
package dev.trellis.langchain4j
