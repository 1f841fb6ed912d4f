@file:JvmName("TripServer")

package dev.trellis.mcp.docs

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.mcp.McpGraphServer
import dev.trellis.mcp.McpGraphTool

// The graph served as an MCP tool in docs/agents.md ("A graph as an MCP tool server"): this file's main is the stdio
// server McpGraphServerTest starts as a child JVM.

object Trip : StateSchema("trip") {
    val city = key<String>("city")
    val days = key("days", 1)
    val plan = key("plan", "")
}

fun planTrip(): McpGraphTool {
    val trip = graph("trip", Trip) {
        val plan = node("plan") { set(Trip.plan, "${state[Trip.days]} days in ${state[Trip.city]}") }
        start(plan)
    }
    return McpGraphTool.builder("plan_trip", trip)
        .description("Plans a trip to a city")
        .input(Trip.city, "the city to visit")
        .input(Trip.days, "how many days")
        .output(Trip.plan)
        .build()
}

fun main() {
    McpGraphServer.builder("trip-planner", "1.0").tool(planTrip()).build().serveStdio()
}
