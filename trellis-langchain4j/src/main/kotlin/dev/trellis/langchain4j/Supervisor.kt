package dev.trellis.langchain4j

import dev.langchain4j.agent.tool.ToolSpecification
import dev.langchain4j.model.chat.ChatModel
import dev.langchain4j.model.chat.request.json.JsonObjectSchema
import dev.trellis.graph.Graph
import dev.trellis.graph.GraphBuilder
import dev.trellis.graph.NodeRef
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/**
 * A worker a [supervisor] may delegate to: a graph that takes a task (text) and gives a result (text). The model sees
 * it as a tool named [name], described by [description], with one argument, `task`.
 *
 * ```kotlin
 * val researcher = Worker.agent("researcher", "finds facts on the web", reactAgent(model, Tools.from(Search())))
 * val writer = Worker.of("writer", "writes a paragraph", writerGraph, input = Doc.brief, output = Doc.text)
 * ```
 */
public class Worker private constructor(
    /** The worker's name: the tool name the model calls and the id of its subgraph node. */
    public val name: String,
    /** What the worker does, as the model reads it. */
    public val description: String,
    /** The worker's graph. */
    public val graph: Graph,
    private val input: StateKey<String>?,
    private val output: StateKey<String>,
) {
    init {
        require(name.matches(NAME)) {
            "Worker name '$name' is not a valid tool name; use letters, digits, '_' and '-' only (at most 64)."
        }
        require(input == null || input.schema === graph.schema) {
            "Worker '$name' reads its task from key '${input?.name}', which is not a key of its graph's schema."
        }
        require(output.schema === graph.schema) {
            "Worker '$name' gives its result from key '${output.name}', which is not a key of its graph's schema."
        }
    }

    internal val specification: ToolSpecification =
        ToolSpecification.builder()
            .name(name)
            .description(description)
            .parameters(
                JsonObjectSchema.builder()
                    .addStringProperty("task", "the task for this worker, with everything it needs to know")
                    .required("task")
                    .build(),
            ).build()

    /** Declares this worker's subgraph node in the delegation graph. */
    internal fun declareIn(builder: GraphBuilder): NodeRef = builder.subgraph(name, graph) {
        input {
            val task = parent[Delegation.task]
            val key = this@Worker.input
            if (key == null) set(AgentState.messages, listOf(Message.User(task))) else set(key, task)
        }
        output(this@Worker.output, Delegation.result)
    }

    override fun toString(): String = "Worker($name)"

    /** Makes workers. */
    public companion object {
        private val NAME = Regex("[a-zA-Z0-9_-]{1,64}")

        /**
         * A worker whose [graph] is an agent over [AgentState] (a [reactAgent], another [supervisor]): the task is
         * its first user message, its [AgentState.answer] the result.
         */
        @JvmStatic
        public fun agent(name: String, description: String, graph: Graph): Worker {
            require(graph.schema === AgentState) {
                "Worker '$name' is built with Worker.agent, but its graph '${graph.id}' is not over AgentState; " +
                    "use Worker.of with the keys its task and result are in."
            }
            return Worker(name, description, graph, null, AgentState.answer)
        }

        /** A worker whose [graph] reads the task from key [input] and gives its result in key [output]. */
        @JvmStatic
        public fun of(
            name: String,
            description: String,
            graph: Graph,
            input: StateKey<String>,
            output: StateKey<String>,
        ): Worker = Worker(name, description, graph, input, output)
    }
}

/** The state of one delegation: a map task of a [supervisor] that runs one worker. */
internal object Delegation : StateSchema("delegation") {
    val callId = key("callId", "")
    val worker = key("worker", "")
    val task = key("task", "")
    val result = key("result", "")
}

/**
 * A supervisor as a graph over [AgentState]: node `supervisor` calls [model] with the conversation, each of
 * [workers] offered as a tool; each tool call is a delegation, and map node `workers` runs them (in parallel, up to
 * [maxParallelWorkers]) as map tasks, each a child run of the called worker's graph (a subgraph node named after the
 * worker: paths `workers[0]/researcher/model`). Each worker's result comes back to the conversation as the tool
 * call's result, and the supervisor is called again, until it answers without delegating: that answer is
 * [AgentState.answer]. At most [maxSteps] supervisor calls ([StepBudgetExceededException] otherwise, as for
 * [reactAgent]); each call charges its tokens to [meters], and the workers charge theirs.
 *
 * Delegations are map tasks: checkpointed one by one, so a run stopped in the middle runs only the delegations that
 * had not ended when it resumes; a worker's interrupt pauses the run (path `workers[1]/writer/...`). A call naming no
 * worker fails its task, naming the workers.
 *
 * ```kotlin
 * val team = supervisor(model, listOf(Worker.agent("researcher", "finds facts", researcher)), maxSteps = 6)
 * val result = team.invoke(stateOf(AgentState.messages to listOf(Message.User("Compare Paris and Rome"))))
 * ```
 */
@JvmSynthetic
public fun supervisor(
    model: ChatModel,
    workers: List<Worker>,
    maxSteps: Int = 10,
    system: String? = Supervisor.DEFAULT_SYSTEM,
    id: String = "supervisor",
    maxParallelWorkers: Int = Int.MAX_VALUE,
    meters: TokenMeters = TokenMeters.DEFAULT,
): Graph {
    require(maxSteps >= 1) { "maxSteps is $maxSteps; a supervisor needs at least 1 model call." }
    require(workers.isNotEmpty()) { "Supervisor '$id' has no workers; give it at least one." }
    val names = workers.map { it.name }
    require(names.toSet().size == names.size) { "Two workers of supervisor '$id' have the same name: $names." }
    val delegation =
        graph("$id-delegation", Delegation) {
            val dispatch =
                node("dispatch") {
                    val name = get(Delegation.worker)
                    require(name in names) {
                        "Supervisor '$id' delegated to '$name', which is not among its workers $names."
                    }
                }
            val nodes = workers.associate { it.name to it.declareIn(this) }
            start(dispatch)
            dispatch.route(*nodes.values.toTypedArray()) { nodes.getValue(it[Delegation.worker]) }
        }
    return graph(id, AgentState) {
        val specifications = workers.map { it.specification }
        val callModel =
            agentModelNode(id, { chatMetered(model, it, meters) }, specifications, maxSteps, system, "supervisor")
        val delegate =
            map("workers", over = AgentState.toolCalls, graph = delegation, maxConcurrency = maxParallelWorkers) {
                input {
                    set(Delegation.callId, item.id)
                    set(Delegation.worker, item.name)
                    set(Delegation.task, taskOf(item))
                }
                output { child ->
                    val result = Message.ToolResult(
                        child[Delegation.callId],
                        child[Delegation.worker],
                        child[Delegation.result],
                    )
                    set(AgentState.messages, listOf(result))
                }
            }
        start(callModel)
        callModel.route(delegate, END) { if (it[AgentState.toolCalls].isEmpty()) END else delegate }
        delegate then callModel
        config { maxNodeExecutions = maxOf(maxNodeExecutions, 2 * maxSteps + 1) }
    }
}

/** The `task` argument of a delegation; the whole arguments when they are not a JSON object with a `task`. */
private fun taskOf(call: ToolCall): String =
    runCatching { (Json.parseToJsonElement(call.arguments) as JsonObject)["task"] as JsonPrimitive }
        .map { it.content }
        .getOrDefault(call.arguments)

/**
 * Builds a [supervisor] graph from Java.
 *
 * ```java
 * Graph team = Supervisor.builder(model)
 *     .worker(Worker.agent("researcher", "finds facts", researcher))
 *     .maxSteps(6)
 *     .build();
 * ```
 */
public class Supervisor private constructor(private val model: ChatModel) {
    private val workers = ArrayList<Worker>()
    private var maxSteps = 10
    private var system: String? = Supervisor.DEFAULT_SYSTEM
    private var id = "supervisor"
    private var maxParallelWorkers = Int.MAX_VALUE
    private var meters = TokenMeters.DEFAULT

    /** Adds a worker. */
    public fun worker(worker: Worker): Supervisor = apply { workers += worker }

    /** The most supervisor calls one run may make (10 by default). */
    public fun maxSteps(maxSteps: Int): Supervisor = apply { this.maxSteps = maxSteps }

    /** The system prompt ([Supervisor.DEFAULT_SYSTEM] by default). */
    public fun system(system: String?): Supervisor = apply { this.system = system }

    /** The graph's id ("supervisor" by default). */
    public fun id(id: String): Supervisor = apply { this.id = id }

    /** How many delegations of one answer run at once (all by default). */
    public fun maxParallelWorkers(max: Int): Supervisor = apply { maxParallelWorkers = max }

    /** The budget meters each supervisor call charges ([TokenMeters.DEFAULT] by default). */
    public fun meters(meters: TokenMeters): Supervisor = apply { this.meters = meters }

    /** The supervisor's graph. */
    public fun build(): Graph = supervisor(model, workers.toList(), maxSteps, system, id, maxParallelWorkers, meters)

    /** Starts a builder; holds the default system prompt. */
    public companion object {
        /** The supervisor's default system prompt. */
        public const val DEFAULT_SYSTEM: String =
            "You lead a team of workers, which are your tools. Split the user's request into tasks and delegate " +
                "each task to the worker that fits it, by calling that worker's tool with the task; call several " +
                "workers at once when their tasks do not depend on each other. Read their results, delegate again " +
                "if needed, then answer the user yourself from the results."

        /** A builder of a supervisor over [model]. */
        @JvmStatic
        public fun builder(model: ChatModel): Supervisor = Supervisor(model)
    }
}
