/*
 * Package dev.trellis.a2a — the Agent2Agent protocol (`docs/agents.md`, A2A) on the A2A Java SDK: calling a remote
 * agent from a node (`RemoteAgent.kt`, `RemoteAgentNode.kt`, `A2aActions.kt` for Java; its updates as `A2aEvent`s,
 * failures as `RemoteAgentException`), and exposing a graph as an A2A agent (`A2aServer.kt`; tasks as runs in
 * `GraphAgentExecutor.kt`, JSON-RPC and SSE over the JDK's HTTP server in `JsonRpcHttp.kt`).
 *
 * May call: the runtime's public API, the Java facade (A2aActions only) and the A2A Java SDK.
 */
package dev.trellis.a2a
