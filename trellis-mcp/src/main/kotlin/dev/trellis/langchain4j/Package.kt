/*
 * Package dev.trellis.langchain4j, module trellis-mcp — the tools of MCP servers as LangChain4j tools of Trellis agents
 * (`docs/agents.md`, "MCP tools"): the server process and its client session (`McpConnection.kt`), the tools it lists
 * turned into `Tools` with bounded concurrency and timeouts (`McpTools.kt`), and JSON Schema to LangChain4j parameter
 * conversion (`McpSchemas.kt`). Its own module so that chat-node users do not pay for the MCP SDK.
 *
 * May call: trellis-langchain4j's public API (`Tools`, `ToolFunction`) and the MCP Java SDK's client.
 */
package dev.trellis.langchain4j
