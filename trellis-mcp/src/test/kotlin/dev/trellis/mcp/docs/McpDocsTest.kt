package dev.trellis.mcp.docs

import dev.langchain4j.agent.tool.Tool
import dev.langchain4j.data.message.AiMessage
import dev.langchain4j.data.message.SystemMessage
import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.langchain4j.data.message.UserMessage
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.AgentState
import dev.trellis.langchain4j.Conversation
import dev.trellis.langchain4j.Message
import dev.trellis.langchain4j.ScriptedChatModel
import dev.trellis.langchain4j.Tools
import dev.trellis.langchain4j.Turn
import dev.trellis.langchain4j.chatNode
import dev.trellis.langchain4j.reactAgent
import dev.trellis.mcp.HttpTestServer
import dev.trellis.mcp.McpGraphServer
import dev.trellis.mcp.McpTools
import dev.trellis.mcp.mcpPromptNode
import dev.trellis.mcp.mcpResourceNode
import dev.trellis.mcp.serverCommand
import dev.trellis.runtime.invoke
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.eclipse.jetty.ee10.servlet.ServletContextHandler
import org.eclipse.jetty.ee10.servlet.ServletHolder
import org.eclipse.jetty.server.Server
import org.eclipse.jetty.server.ServerConnector
import org.junit.jupiter.api.Test
import java.time.Duration

// The Kotlin snippets of docs/agents.md, "MCP tools", as they are there; each runs below.

object Desk : StateSchema("desk") {
    val topic = key<String>("topic")
    val guide = key("guide", "")
    val messages = Conversation.key(this, "messages")
    val answer = key("answer", "")
}

class Clock {
    @Tool("The current time")
    fun now(): String = "12:00"
}

class McpDocsTest {
    private fun ScriptedChatModel.toolResults(call: Int) =
        requests[call].messages().filterIsInstance<ToolExecutionResultMessage>().map { it.text() }

    @Test
    fun `the tools of a server started over stdio, next to a local tool`(): Unit = runBlocking {
        val (command, args) = serverCommand()
        val apiKey = "test-key"
        val model =
            ScriptedChatModel(
                Turn.Calls(listOf("temperature" to """{"city": "Paris", "unit": "CELSIUS"}""", "now" to "{}")),
                Turn.Text("Paris is 21 C at noon."),
            )
        McpTools.stdio(command, *args)
            .env("WEATHER_API_KEY", apiKey)
            .requestTimeout(Duration.ofSeconds(30))
            .initializationTimeout(Duration.ofMinutes(2))
            .start()
            .use { weather ->
                val tools = weather.addTo(Tools.builder().add(Clock())).build()
                reactAgent(model, tools).invoke(stateOf(AgentState.messages to listOf(Message.User("Weather?"))))
            }
        model.toolResults(1) shouldBe listOf("Paris: 21 C", "12:00")
    }

    @Test
    fun `the tools of a remote server, with headers asked for each request`(): Unit = runBlocking {
        HttpTestServer(token = "s3cret").use { server ->
            val url = server.url
            val tokens = object {
                fun current() = "s3cret"
            }
            val model = ScriptedChatModel(Turn.Calls(listOf("add" to """{"a": 1, "b": 2}""")), Turn.Text("3"))
            val question = stateOf(AgentState.messages to listOf(Message.User("1 + 2?")))
            McpTools.http(url)
                .headers { mapOf("Authorization" to "Bearer ${tokens.current()}") }
                .connectTimeout(Duration.ofSeconds(5))
                .start()
                .use { remote -> reactAgent(model, remote.tools).invoke(question) }
            model.toolResults(1) shouldBe listOf("3")
            server.calls shouldBe listOf("add")
        }
    }

    @Test
    fun `a resource and a prompt read by nodes, answered by a chat node`(): Unit = runBlocking {
        HttpTestServer().use { server ->
            McpTools.http(server.url).start().use { docs ->
                val model = ScriptedChatModel(Turn.Text("MCP servers offer tools, resources and prompts."))
                val desk = graph("desk", Desk) {
                    val guide = mcpResourceNode("guide", docs, output = Desk.guide) { state ->
                        "file:///guides/${state[Desk.topic]}.md"
                    }
                    val brief = mcpPromptNode("brief", docs, "summarize", output = Desk.messages) { state ->
                        mapOf("topic" to state[Desk.topic])
                    }
                    val answer = chatNode("answer", model, output = Desk.answer) { state ->
                        listOf(SystemMessage.from(state[Desk.guide])) + Message.toChatMessages(state[Desk.messages])
                    }
                    start(guide)
                    guide then brief
                    brief then answer
                }
                val result = desk.invoke(stateOf(Desk.topic to "mcp"))
                result.state[Desk.answer] shouldBe "MCP servers offer tools, resources and prompts."
                model.requests.single().messages() shouldBe listOf(
                    SystemMessage.from("# MCP\nTools, resources and prompts."),
                    UserMessage.from("Summarize what you know about mcp."),
                    AiMessage.from("Here is what I know about mcp:"),
                )
                server.calls shouldBe listOf("read file:///guides/mcp.md", "prompt summarize mcp")
            }
        }
    }

    @Test
    fun `a graph served over HTTP from Jetty`() {
        val port = 0
        val server = McpGraphServer.builder("trip-planner", "1.0").tool(planTrip()).build()
        val jetty = Server(port)
        val context = ServletContextHandler()
        context.addServlet(ServletHolder(server.httpServlet("/mcp")).apply { isAsyncSupported = true }, "/*")
        jetty.handler = context
        jetty.start()
        try {
            val bound = (jetty.connectors[0] as ServerConnector).localPort
            McpTools.http("http://127.0.0.1:$bound/mcp").start().use { trips ->
                trips.call("plan_trip", """{"city": "Lisbon", "days": 2}""") shouldBe "2 days in Lisbon"
            }
        } finally {
            jetty.stop()
        }
    }
}
