package dev.trellis.springai

import org.springframework.ai.support.ToolCallbacks
import org.springframework.ai.tool.ToolCallback
import org.springframework.ai.tool.definition.ToolDefinition

/**
 * Runs one tool: takes the call's arguments (a JSON object, as text) and returns the result the model will read.
 * May block (it runs on the IO pool, interrupted when the run is cancelled) and may throw: the tool node's attempt
 * then fails and its retry policy decides.
 */
public fun interface ToolFunction {
    /** Runs the tool with [arguments], a JSON object as text; returns its result as text. */
    @Throws(Exception::class)
    public fun execute(arguments: String): String
}

/**
 * The tools a model may call: Spring AI [ToolCallback]s — `@Tool` methods of objects ([Builder.add], through
 * Spring AI's `ToolCallbacks.from`), any `ToolCallback` (a `FunctionToolCallback`, the tools of an MCP client), or a
 * [ToolDefinition] with a [ToolFunction]. The model is given their definitions; Trellis, not Spring AI, runs the
 * calls, each as a task of a tool node ([toolNode]).
 *
 * A tool marked with [Builder.requireApproval] pauses the run before it runs (an interrupt of its tool task), until
 * a person answers `yes` (see `docs/spring.md`).
 *
 * ```kotlin
 * class Weather {
 *     @Tool(description = "Current temperature in a city")
 *     fun temperature(city: String): String = "21 C"
 * }
 * val tools = Tools.builder().add(Weather()).requireApproval("temperature").build()
 * ```
 */
public class Tools private constructor(
    private val entries: Map<String, ToolCallback>,
    /** The tools, in the order they were added: what the model is given. */
    public val callbacks: List<ToolCallback>,
    private val approval: Set<String>,
) {
    /** The names of the tools, in the order they were added. */
    public val names: List<String> get() = callbacks.map { it.toolDefinition.name() }

    /** Whether tool [name] waits for a person's approval before it runs. */
    public fun requiresApproval(name: String): Boolean = name in approval

    /** Runs [call]; fails naming the tools there are when the model asked for one that is not here. */
    internal fun execute(call: ToolCall): String {
        val callback =
            entries[call.name]
                ?: throw IllegalArgumentException(
                    "The model called tool '${call.name}', which is not among the tools given ($names); add it " +
                        "to the Tools, or tell the model which tools it has.",
                )
        return callback.call(call.arguments)
    }

    override fun toString(): String = "Tools($names)"

    /** Collects tools; tool names must be unique. */
    public class Builder internal constructor() {
        private val callbacks = LinkedHashMap<String, ToolCallback>()
        private val approval = LinkedHashSet<String>()

        /** Adds a Spring AI tool. */
        public fun add(callback: ToolCallback): Builder = apply {
            val name = callback.toolDefinition.name()
            require(callbacks.put(name, callback) == null) {
                "Two tools are named '$name'; give each tool its own name."
            }
        }

        /** Adds a tool: what the model sees ([definition]) and what runs ([function]). */
        public fun add(definition: ToolDefinition, function: ToolFunction): Builder =
            add(FunctionTool(definition, function))

        /**
         * Adds every `@Tool` method of [toolObject] (Spring AI's `org.springframework.ai.tool.annotation.Tool`), as
         * Spring AI's `ToolCallbacks.from` makes them: their definitions, and arguments converted from the call's
         * JSON by Spring AI.
         */
        public fun add(toolObject: Any): Builder = apply {
            val found = if (toolObject is ToolCallback) arrayOf(toolObject) else ToolCallbacks.from(toolObject)
            require(found.isNotEmpty()) {
                "${toolObject.javaClass.name} has no method annotated with @Tool; annotate its tools with " +
                    "org.springframework.ai.tool.annotation.Tool."
            }
            found.sortedBy { it.toolDefinition.name() }.forEach { add(it) }
        }

        /** Makes tools [names] wait for a person's approval before they run (an interrupt, answered `yes`). */
        public fun requireApproval(vararg names: String): Builder = apply { approval += names }

        /** The tools; fails when [requireApproval] names a tool that was not added. */
        public fun build(): Tools {
            val unknown = approval - callbacks.keys
            require(unknown.isEmpty()) {
                "requireApproval names $unknown, which are not among the tools added (${callbacks.keys}); add " +
                    "those tools, or fix the names."
            }
            return Tools(LinkedHashMap(callbacks), callbacks.values.toList(), approval.toSet())
        }
    }

    /** Makes [Tools]. */
    public companion object {
        /** A builder of tools. */
        @JvmStatic
        public fun builder(): Builder = Builder()

        /** The `@Tool` methods of [toolObjects]. */
        @JvmStatic
        public fun from(vararg toolObjects: Any): Tools =
            builder().apply { toolObjects.forEach { add(it) } }.build()
    }
}

/** A tool made of a definition and a [ToolFunction]. */
private class FunctionTool(private val definition: ToolDefinition, private val function: ToolFunction) : ToolCallback {
    override fun getToolDefinition(): ToolDefinition = definition

    override fun call(toolInput: String): String = function.execute(toolInput)
}
