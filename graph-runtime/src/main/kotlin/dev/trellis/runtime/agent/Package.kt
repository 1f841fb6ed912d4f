/*
 * Package dev.trellis.runtime.agent — agents as graph nodes (`docs/agents.md`): what an agent is and how it is kept
 * isolated between calls, by sessions or snapshot and restore (`Agent.kt`, `AgentSnapshot.kt`), the node that calls
 * one (`AgentNode.kt`), its input and scope (`AgentInput.kt`, `AgentScope.kt`) and its events (`AgentEvent.kt`).
 *
 * May call: the graph DSL only; it builds on the public API like a user would.
 */
package dev.trellis.runtime.agent
