package dev.trellis.mcp

import dev.trellis.graph.Graph
import dev.trellis.graph.StateKey

/**
 * A Trellis graph offered as one MCP tool by an [McpGraphServer]: its [inputs] (keys of the graph's state) are the
 * tool's arguments, its input schema built from each key's serializer; a call runs the graph from those values and
 * answers with the [outputs] of the run's final state.
 *
 * ```kotlin
 * val plan = McpGraphTool.builder("plan_trip", trip)
 *     .description("Plans a day in a city")
 *     .input(Trip.city, "the city to visit")
 *     .output(Trip.plan)
 *     .build()
 * ```
 */
public class McpGraphTool private constructor(
    /** The tool's name, as clients call it. */
    public val name: String,
    /** The graph a call runs. */
    public val graph: Graph,
    /** What the tool does, for the model that calls it. */
    public val description: String,
    /** The keys whose values are the tool's arguments, with the description of each. */
    public val inputs: Map<StateKey<*>, String>,
    /** The keys of the final state the tool answers with. */
    public val outputs: List<StateKey<*>>,
) {
    override fun toString(): String = "McpGraphTool($name, graph ${graph.id})"

    /** Declares a [McpGraphTool]: inputs, outputs and a description. */
    public class Builder internal constructor(private val name: String, private val graph: Graph) {
        private var description: String = "Runs graph '${graph.id}'."
        private val inputs = LinkedHashMap<StateKey<*>, String>()
        private val outputs = ArrayList<StateKey<*>>()

        /** What the tool does, as the model reads it (default: the graph's id). */
        public fun description(description: String): Builder = apply { this.description = description }

        /**
         * Makes key [key] an argument of the tool, described by [description]; an argument is required when its key
         * has no default and is not nullable.
         */
        @JvmOverloads
        public fun input(key: StateKey<*>, description: String = key.name): Builder = apply {
            requireOwn(key, "input")
            inputs[key] = description
        }

        /** Makes key [key] of the run's final state part of the tool's answer. */
        public fun output(key: StateKey<*>): Builder = apply {
            requireOwn(key, "output")
            if (key !in outputs) outputs += key
        }

        private fun requireOwn(key: StateKey<*>, what: String) = require(key.schema === graph.schema) {
            "Key '${key.name}' of schema '${key.schema.name}' cannot be an $what of tool '$name': " +
                "graph '${graph.id}' " +
                "has schema '${graph.schema.name}' (keys ${graph.schema.keys.map { it.name }})."
        }

        /** The tool; fails when it has no output, naming the graph's keys. */
        public fun build(): McpGraphTool {
            require(outputs.isNotEmpty()) {
                "Tool '$name' has no output: add output(key) with a key of graph '${graph.id}' " +
                    "(${graph.schema.keys.map { it.name }})."
            }
            val missing = graph.schema.keys.filter { !it.hasDefault && !it.nullable && it !in inputs }
            require(missing.isEmpty()) {
                "Tool '$name' cannot start graph '${graph.id}': its keys ${missing.map { it.name }} have no default, " +
                    "so a run needs them. Add input(key, description) for each."
            }
            return McpGraphTool(name, graph, description, LinkedHashMap(inputs), outputs.toList())
        }
    }

    /** Makes [McpGraphTool]s. */
    public companion object {
        /** A tool named [name] (letters, digits, `_`, `-`, `.`) that runs [graph]. */
        @JvmStatic
        public fun builder(name: String, graph: Graph): Builder {
            require(name.isNotEmpty() && name.length <= 128 && name.all { it.isLetterOrDigit() || it in "_-." }) {
                "An MCP tool name has 1 to 128 letters, digits, '_', '-' or '.', not '$name' (for example plan_trip)."
            }
            return Builder(name, graph)
        }
    }
}
