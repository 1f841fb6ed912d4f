package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.Tool
import dev.langchain4j.agent.tool.ToolMemoryId
import dev.langchain4j.agent.tool.ToolSpecification
import dev.langchain4j.agent.tool.ToolSpecifications
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import java.lang.reflect.InvocationTargetException
import java.lang.reflect.Method

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

/** Replaces a tool's function by another, for [Tools.wrap]: usually one that calls [ToolFunction] and records it. */
public fun interface ToolWrapper {
    /** The function to run for the tool [specification] instead of [function]. */
    public fun wrap(specification: ToolSpecification, function: ToolFunction): ToolFunction
}

/**
 * The tools a model may call: each a LangChain4j [ToolSpecification] (what the model sees) and a [ToolFunction]
 * (what runs). Build with [builder]; objects with `@Tool` methods are added with [Builder.add] (or [from]), their
 * specifications made by LangChain4j's `ToolSpecifications`.
 *
 * A tool marked with [Builder.requireApproval] pauses the run before it runs (an interrupt of its tool task), until
 * a person answers `yes` (see `docs/agents.md`).
 *
 * ```kotlin
 * class Weather {
 *     @Tool("Current temperature in a city, in °C")
 *     fun temperature(city: String): Int = 21
 * }
 * val tools = Tools.builder().add(Weather()).requireApproval("sendMail").add(mailSpec, mailer::send).build()
 * ```
 */
public class Tools private constructor(
    private val entries: Map<String, ToolFunction>,
    /** The specifications the model is given, in the order the tools were added. */
    public val specifications: List<ToolSpecification>,
    private val approval: Set<String>,
) {
    /** The names of the tools, in the order they were added. */
    public val names: List<String> get() = specifications.map { it.name() }

    /** Whether tool [name] waits for a person's approval before it runs. */
    public fun requiresApproval(name: String): Boolean = name in approval

    /** Runs [call]; fails naming the tools there are when the model asked for one that is not here. */
    internal fun execute(call: ToolCall): String {
        val function =
            entries[call.name]
                ?: throw IllegalArgumentException(
                    "The model called tool '${call.name}', which is not among the tools given ($names); add it " +
                        "to the Tools, or tell the model which tools it has.",
                )
        return function.execute(call.arguments)
    }

    /**
     * These tools with each function replaced by what [wrapper] makes of it (a recording, a fake, a counter), in the
     * same order, with the same specifications and approvals. Works for any tool, `@Tool` methods and MCP tools alike.
     */
    public fun wrap(wrapper: ToolWrapper): Tools {
        val wrapped = LinkedHashMap<String, ToolFunction>()
        for (specification in specifications) {
            wrapped[specification.name()] = wrapper.wrap(specification, entries.getValue(specification.name()))
        }
        return Tools(wrapped, specifications, approval)
    }

    override fun toString(): String = "Tools($names)"

    /** Collects tools; [build] checks that their names are unique. */
    public class Builder internal constructor() {
        private val specifications = ArrayList<ToolSpecification>()
        private val functions = LinkedHashMap<String, ToolFunction>()
        private val approval = LinkedHashSet<String>()

        /** Adds a tool: what the model sees ([specification]) and what runs ([function]). */
        public fun add(specification: ToolSpecification, function: ToolFunction): Builder = apply {
            require(functions.put(specification.name(), function) == null) {
                "Two tools are named '${specification.name()}'; give each tool its own name."
            }
            specifications += specification
        }

        /**
         * Adds every `@Tool` method of [toolObject]. Arguments are read from the call's JSON by position, into
         * parameters of type `String`, a number, `Boolean` or an enum; a parameter of another type fails here,
         * naming it (take a `String` and parse it, or add that tool with a [ToolFunction]).
         */
        public fun add(toolObject: Any): Builder = apply {
            val methods = toolObject.javaClass.methods.filter { it.isAnnotationPresent(Tool::class.java) }
            require(methods.isNotEmpty()) {
                "${toolObject.javaClass.name} has no public method annotated with @Tool; annotate its tools with " +
                    "dev.langchain4j.agent.tool.Tool."
            }
            for (method in methods.sortedBy { it.name }) {
                add(ToolSpecifications.toolSpecificationFrom(method), MethodTool(toolObject, method))
            }
        }

        /** Makes tools [names] wait for a person's approval before they run (an interrupt, answered `yes`). */
        public fun requireApproval(vararg names: String): Builder = apply { approval += names }

        /** The tools; fails when [requireApproval] names a tool that was not added. */
        public fun build(): Tools {
            val unknown = approval - functions.keys
            require(unknown.isEmpty()) {
                "requireApproval names $unknown, which are not among the tools added (${functions.keys}); add " +
                    "those tools, or fix the names."
            }
            return Tools(LinkedHashMap(functions), specifications.toList(), approval.toSet())
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

/** Runs a `@Tool` method, its arguments read from the call's JSON object by parameter position. */
private class MethodTool(private val target: Any, private val method: Method) : ToolFunction {
    private val names: List<String?>
    private val parameters = method.parameters

    init {
        val properties = ToolSpecifications.toolSpecificationFrom(method).parameters()?.properties()?.keys.orEmpty()
        val iterator = properties.iterator()
        names =
            parameters.map { parameter ->
                if (parameter.isAnnotationPresent(ToolMemoryId::class.java)) {
                    null
                } else {
                    require(convertible(parameter.type)) {
                        "Tool method ${method.name} of ${target.javaClass.name} takes a ${parameter.type.name}; " +
                            "tool methods added as objects take String, numbers, Boolean or enums: take a String " +
                            "and parse it, or add the tool with a ToolFunction."
                    }
                    iterator.next()
                }
            }
        method.isAccessible = true
    }

    override fun execute(arguments: String): String {
        val json = if (arguments.isBlank()) JsonObject(emptyMap()) else Json.parseToJsonElement(arguments).jsonObject
        val values =
            Array(parameters.size) { i ->
                val name = names[i] ?: return@Array null
                val element = json[name]
                if (element == null || element is JsonNull) {
                    require(!parameters[i].type.isPrimitive) {
                        "Tool '${method.name}' was called without argument '$name': $arguments."
                    }
                    null
                } else {
                    convert((element as JsonPrimitive).content, parameters[i].type)
                }
            }
        val result =
            try {
                method.invoke(target, *values)
            } catch (e: InvocationTargetException) {
                throw e.targetException
            }
        return when {
            method.returnType == Void.TYPE -> "Success"
            result == null -> "null"
            else -> result.toString()
        }
    }

    private fun convertible(type: Class<*>): Boolean =
        type == String::class.java || type.isEnum || type.kotlin.javaObjectType in boxed

    private fun convert(text: String, type: Class<*>): Any = when (type.kotlin.javaObjectType) {
        String::class.javaObjectType -> text
        Int::class.javaObjectType -> text.toDouble().toInt()
        Long::class.javaObjectType -> text.toDouble().toLong()
        Double::class.javaObjectType -> text.toDouble()
        Float::class.javaObjectType -> text.toFloat()
        Short::class.javaObjectType -> text.toDouble().toInt().toShort()
        Byte::class.javaObjectType -> text.toDouble().toInt().toByte()
        Boolean::class.javaObjectType -> text.toBooleanStrict()
        else ->
            type.enumConstants.firstOrNull { (it as Enum<*>).name == text }
                ?: throw IllegalArgumentException(
                    "Tool '${method.name}' got '$text', not one of ${type.enumConstants.toList()}.",
                )
    }

    private companion object {
        val boxed =
            setOf(
                Int::class.javaObjectType,
                Long::class.javaObjectType,
                Double::class.javaObjectType,
                Float::class.javaObjectType,
                Short::class.javaObjectType,
                Byte::class.javaObjectType,
                Boolean::class.javaObjectType,
            )
    }
}
