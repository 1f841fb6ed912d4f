package dev.trellis.mcp

import dev.trellis.langchain4j.Message
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import org.junit.jupiter.api.Test

/** A server's resources and prompts through McpTools (the server of [HttpTestServer], over streamable HTTP). */
class McpResourcesTest {
    @Test
    fun `resources are listed and read as text, a binary one as a placeholder`() {
        HttpTestServer().use { server ->
            McpTools.http(server.url).start().use { mcp ->
                mcp.resources().map { listOf(it.uri, it.name, it.description, it.mimeType) } shouldBe listOf(
                    listOf("file:///guides/mcp.md", "mcp-guide", "How to use MCP", "text/markdown"),
                    listOf("file:///logo.png", "logo", null, "image/png"),
                )
                mcp.readResource("file:///guides/mcp.md") shouldBe "# MCP\nTools, resources and prompts."
                mcp.readResource("file:///logo.png") shouldBe "[resource file:///logo.png: image/png, 12 bytes]"
                val missing = shouldThrow<McpToolException> { mcp.readResource("file:///nowhere.md") }
                missing.message!! shouldStartWith
                    "MCP server '${server.url}' refused the read of resource 'file:///nowhere.md': "
            }
        }
    }

    @Test
    fun `prompts are listed with their arguments and filled into messages`() {
        HttpTestServer().use { server ->
            McpTools.http(server.url).start().use { mcp ->
                val prompt = mcp.prompts().single()
                prompt.name shouldBe "summarize"
                prompt.description shouldBe "Asks for a summary of a topic"
                prompt.arguments.map { listOf(it.name, it.description, it.required) } shouldBe
                    listOf(listOf("topic", "what to summarize", true))
                mcp.prompt("summarize", mapOf("topic" to "Trellis")) shouldBe listOf(
                    Message.User("Summarize what you know about Trellis."),
                    Message.Ai("Here is what I know about Trellis:"),
                )
                val missing = shouldThrow<McpToolException> { mcp.prompt("translate") }
                missing.message!! shouldStartWith "MCP server '${server.url}' refused the prompt 'translate': "
            }
        }
    }
}
