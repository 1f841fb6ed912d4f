package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.P
import dev.langchain4j.agent.tool.Tool
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.time.Duration

/** The MCP example of `docs/agents.md`, as the guide shows it, against the test server ([serverCommand]). */
class McpGuideTest {
    class Weather {
        @Tool("Current temperature in a city")
        fun temperature(
            @P(name = "city", value = "the city") city: String,
        ): String = "21 C"
    }

    @Test
    fun `a ReAct agent calls a tool of an MCP server started for the runs`(): Unit = runBlocking {
        val model = ScriptedChatModel(Turn.Calls(listOf("add" to """{"a": 2, "b": 3}""")), Turn.Text("5"))
        val (command, args) = serverCommand()

        // command, args: e.g. "npx", arrayOf("-y", "@modelcontextprotocol/server-filesystem", "/srv/docs")
        val result = McpTools.stdio(command, *args)
            .initializationTimeout(Duration.ofSeconds(120)) // bounds start(): the server's own start-up
            .requestTimeout(Duration.ofSeconds(30))
            .only("add", "crash") // the server's tools offered to the model
            .start()
            .use { server ->
                val tools = server.addTo(Tools.builder().add(Weather())).requireApproval("crash").build()
                reactAgent(model, tools).invoke(stateOf(AgentState.messages to listOf(Message.User("2 + 3?"))))
            }
        result.status shouldBe Status.COMPLETED
        result.state[AgentState.answer] shouldBe "5"
        result.state[AgentState.messages].filterIsInstance<Message.ToolResult>().single().text shouldBe "5"
    }
}
