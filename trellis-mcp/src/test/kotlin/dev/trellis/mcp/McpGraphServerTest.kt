package dev.trellis.mcp

import dev.langchain4j.data.message.ToolExecutionResultMessage
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.langchain4j.AgentState
import dev.trellis.langchain4j.Message
import dev.trellis.langchain4j.ScriptedChatModel
import dev.trellis.langchain4j.Turn
import dev.trellis.langchain4j.reactAgent
import dev.trellis.mcp.docs.Trip
import dev.trellis.mcp.docs.planTrip
import dev.trellis.runtime.invoke
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import io.modelcontextprotocol.client.McpClient
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport
import io.modelcontextprotocol.spec.McpSchema
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Test
import java.nio.file.Path
import java.time.Duration
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/** Trellis graphs served as MCP tools, over streamable HTTP (Jetty on loopback) and stdio (a child JVM). */
class McpGraphServerTest {
    private object Fails : StateSchema("fails") {
        val reason = key<String>("reason")
        val result = key("result", "")
    }

    private val failing =
        McpGraphTool.builder(
            "always_fails",
            graph("fails", Fails) {
                val boom = node("boom") { error("the reason was: ${state[Fails.reason]}") }
                start(boom)
            },
        ).input(Fails.reason).output(Fails.result).build()

    private val server = McpGraphServer.builder("trip-planner", "1.0").tool(planTrip()).tool(failing).build()

    private fun McpSchema.CallToolResult.text(): String = (content().single() as McpSchema.TextContent).text()

    @Test
    fun `a graph served over streamable HTTP is a tool the SDK's client lists and calls`() {
        JettyServer(server.httpServlet("/mcp")).use { jetty ->
            val transport =
                HttpClientStreamableHttpTransport.builder("http://127.0.0.1:${jetty.port}").endpoint("/mcp").build()
            val client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build()
            try {
                client.initialize().serverInfo().name() shouldBe "trip-planner"
                val tools = client.listTools().tools()
                tools.map { it.name() } shouldBe listOf("plan_trip", "always_fails")
                tools[0].description() shouldBe "Plans a trip to a city"
                tools[0].inputSchema() shouldBe mapOf(
                    "type" to "object",
                    "properties" to mapOf(
                        "city" to mapOf("type" to "string", "description" to "the city to visit"),
                        "days" to mapOf("type" to "integer", "description" to "how many days"),
                    ),
                    "required" to listOf("city"),
                    "additionalProperties" to false,
                )
                tools[0].outputSchema() shouldBe
                    mapOf("type" to "object", "properties" to mapOf("plan" to mapOf("type" to "string")))

                val plan =
                    McpSchema.CallToolRequest.builder("plan_trip").arguments(mapOf("city" to "Oslo", "days" to 2))
                val result = client.callTool(plan.build())
                result.isError shouldBe false
                result.text() shouldBe "2 days in Oslo"
                result.structuredContent() shouldBe mapOf("plan" to "2 days in Oslo")
                // An input with a default may be left out.
                val rome = McpSchema.CallToolRequest.builder("plan_trip").arguments(mapOf("city" to "Rome")).build()
                client.callTool(rome).text() shouldBe "1 days in Rome"
                // The graph's failure is the call's error result.
                val failed =
                    client.callTool(
                        McpSchema.CallToolRequest.builder("always_fails").arguments(mapOf("reason" to "rain")).build(),
                    )
                failed.isError shouldBe true
                failed.text() shouldStartWith "The run "
                failed.text() shouldContain "of graph 'fails' failed: the reason was: rain"
            } finally {
                client.closeGracefully()
            }
        }
    }

    @Test
    fun `arguments that do not decode are the call's error, naming the argument`() {
        val input = shouldThrow<IllegalArgumentException> {
            inputState(planTrip(), Json.parseToJsonElement("""{"city": "Oslo", "days": "two"}""").jsonObject)
        }
        input.message!! shouldStartWith "Argument 'days' of tool 'plan_trip' must be a kotlin.Int, not \"two\""
        val unknown = shouldThrow<IllegalArgumentException> {
            inputState(planTrip(), JsonObject(mapOf("weather" to JsonPrimitive(1))))
        }
        unknown.message shouldBe "Tool 'plan_trip' has no argument 'weather'; its arguments are [city, days]."
    }

    @Test
    fun `a ReAct agent calls a graph served over HTTP, in parallel, each call a run of its own`(): Unit = runBlocking {
        JettyServer(server.httpServlet("/mcp")).use { jetty ->
            McpTools.http("http://127.0.0.1:${jetty.port}/mcp").initializationTimeout(Duration.ofSeconds(60))
                .requestTimeout(Duration.ofSeconds(60)).start().use { trips ->
                    val cities = (1..20).map { "City$it" }
                    val model = ScriptedChatModel(
                        Turn.Calls(cities.map { "plan_trip" to """{"city": "$it", "days": 3}""" }),
                        Turn.Text("Planned."),
                    )
                    val input = stateOf(AgentState.messages to listOf(Message.User("Plan")))
                    val result = reactAgent(model, trips.tools, maxSteps = 3).invoke(input)
                    result.state[AgentState.answer] shouldBe "Planned."
                    model.requests[1].messages().filterIsInstance<ToolExecutionResultMessage>()
                        .map { it.text() } shouldBe cities.map { "3 days in $it" }
                }
        }
    }

    @Test
    fun `a graph served over stdio answers parallel calls, none lost`() {
        val java = Path.of(System.getProperty("java.home"), "bin", "java").toString()
        val classPath = System.getProperty("java.class.path")
        McpTools.stdio(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", classPath, "dev.trellis.mcp.docs.TripServer")
            .initializationTimeout(Duration.ofSeconds(120)).requestTimeout(Duration.ofSeconds(60)).start()
            .use { trips ->
                trips.names shouldBe listOf("plan_trip")
                val pool = Executors.newFixedThreadPool(8)
                try {
                    val calls =
                        (1..200).map { n -> pool.submit<String> { trips.call("plan_trip", """{"city": "C$n"}""") } }
                    calls.map { it.get(120, TimeUnit.SECONDS) } shouldBe (1..200).map { "1 days in C$it" }
                } finally {
                    pool.shutdownNow()
                }
            }
    }

    @Test
    fun `a tool and a server are declared with what they need, or fail naming it`() {
        val trip = planTrip().graph
        shouldThrow<IllegalArgumentException> { McpGraphTool.builder("plan trip", trip) }.message shouldBe
            "An MCP tool name has 1 to 128 letters, digits, '_', '-' or '.', not 'plan trip' (for example plan_trip)."
        shouldThrow<IllegalArgumentException> { McpGraphTool.builder("plan", trip).input(Trip.city).build() }
            .message shouldBe
            "Tool 'plan' has no output: add output(key) with a key of graph 'trip' ([city, days, plan])."
        shouldThrow<IllegalArgumentException> { McpGraphTool.builder("plan", trip).output(Trip.plan).build() }
            .message shouldBe
            "Tool 'plan' cannot start graph 'trip': its keys [city] have no default, so a run needs them. " +
            "Add input(key, description) for each."
        shouldThrow<IllegalArgumentException> { McpGraphTool.builder("plan", trip).input(Fails.reason) }
            .message shouldBe
            "Key 'reason' of schema 'fails' cannot be an input of tool 'plan': graph 'trip' has schema 'trip' " +
            "(keys [city, days, plan])."
        shouldThrow<IllegalArgumentException> { McpGraphServer.builder("s", "1").tool(planTrip()).tool(planTrip()) }
            .message shouldBe "The server already has a tool named 'plan_trip'; give each McpGraphTool its own name."
        shouldThrow<IllegalArgumentException> { McpGraphServer.builder("s", "1").build() }.message shouldBe
            "Server 's' has no tool: add tool(McpGraphTool.builder(name, graph)…)."
    }
}
