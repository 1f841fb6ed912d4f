/*
 * Package dev.trellis.mcp, module trellis-mcp — MCP for Trellis (`docs/agents.md`, "MCP tools" and after).
 * Client side: a session with a server and its reconnection (`McpConnection.kt`), opened over stdio, streamable HTTP
 * or SSE (`McpTransports.kt`); the tools it lists turned into `Tools` with bounded concurrency and timeouts, its
 * resources and prompts (`McpTools.kt`, `McpResources.kt`), nodes that read them (`McpNodes.kt`), and JSON Schema to
 * LangChain4j parameter conversion (`McpSchemas.kt`). Server side: graphs offered as MCP tools (`McpGraphTool.kt`,
 * `McpGraphServer.kt`), their keys' serializers as JSON schemas (`GraphToolJson.kt`), and the SDK's stdio server
 * transport made safe for parallel answers (`SerializedStdioServerTransport.kt`). Its own module (and package: no
 * package is shared by two modules) so that chat-node users do not pay for the MCP SDK.
 *
 * May call: trellis-langchain4j's public API (`Tools`, `ToolFunction`, `Message`), the runtime's public API (runs of
 * served graphs), the Java facade's `NodeAction` (McpActions) and the MCP Java SDK's client and server.
 */
package dev.trellis.mcp
