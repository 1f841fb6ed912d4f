package dev.trellis.bench

import ai.koog.agents.core.agent.AIAgent
import ai.koog.agents.core.agent.GraphAIAgent
import ai.koog.agents.core.agent.config.AIAgentConfig
import ai.koog.agents.core.agent.entity.AIAgentGraphStrategy
import ai.koog.agents.core.agent.entity.AIAgentNodeBase
import ai.koog.agents.core.dsl.builder.node
import ai.koog.agents.core.dsl.builder.parallel
import ai.koog.agents.core.dsl.builder.strategy
import ai.koog.agents.core.dsl.builder.subgraph
import ai.koog.agents.core.tools.ToolDescriptor
import ai.koog.prompt.Prompt
import ai.koog.prompt.dsl.ModerationResult
import ai.koog.prompt.dsl.prompt
import ai.koog.prompt.executor.model.PromptExecutor
import ai.koog.prompt.llm.LLMProvider
import ai.koog.prompt.llm.LLModel
import ai.koog.prompt.message.Message
import ai.koog.prompt.streaming.StreamFrame
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.runBlocking

/**
 * The benchmark workloads as Koog graph strategies (`strategy`, `node`, `edge`/`then`, `onCondition`, `subgraph`,
 * `parallel`), each run by a `GraphAIAgent` built once and run once per operation (`agent.run(input)` inside
 * `runBlocking`). Data flows along the edges, as Koog's nodes pass their output to the next node's input: the counter
 * is an `Int`, the state-growth log a list each node appends to. No node calls an LLM, so the agents' prompt executor
 * is [NoLlm], which fails if it is ever called.
 */
public object KoogWorkloads {
    /** Node steps allowed per run: above the loop's 1,000. */
    private const val MAX_ITERATIONS: Int = 100_000

    private val config = AIAgentConfig(
        prompt = prompt("bench") {},
        model = LLModel(LLMProvider.OpenAI, "no-llm"),
        maxAgentIterations = MAX_ITERATIONS,
    )

    private fun <I, O> agent(strategy: AIAgentGraphStrategy<I, O>): GraphAIAgent<I, O> =
        AIAgent(promptExecutor = NoLlm, agentConfig = config, strategy = strategy)

    /** One node incrementing the counter (input 0). */
    @JvmStatic
    public fun oneNode(): GraphAIAgent<Int, Int> = agent(
        strategy<Int, Int>("one-node") {
            val only by node<Int, Int>("only") { it + 1 }
            nodeStart then only then nodeFinish
        },
    )

    /** A chain of [length] nodes, each incrementing the counter (input 0). */
    @JvmStatic
    public fun chain(length: Int): GraphAIAgent<Int, Int> = agent(
        strategy<Int, Int>("chain-$length") {
            var last: AIAgentNodeBase<*, Int> = nodeStart
            for (i in 0 until length) {
                val c by node<Int, Int>("c$i") { it + 1 }
                edge(last forwardTo c)
                last = c
            }
            edge(last forwardTo nodeFinish)
        },
    )

    /**
     * A `parallel` node of [width] branches on [dispatcher], each returning its id, merged (Koog's `fold`) into the
     * list of ids in branch order; input `Unit`. The parallel node is the fan-out and the join.
     */
    @JvmStatic
    public fun fanOut(width: Int, dispatcher: CoroutineDispatcher): GraphAIAgent<Unit, List<String>> = agent(
        strategy<Unit, List<String>>("fan-out-$width") {
            val branches = Array(width) { i ->
                val label = "b$i"
                val branch by node<Unit, List<String>>(label) { listOf(label) }
                branch
            }
            val fan by parallel(*branches, dispatcher = dispatcher, name = "fan") {
                val ids = ArrayList<String>(width)
                fold<List<String>>(ids) { acc, branchIds ->
                    ids.addAll(branchIds)
                    acc
                }
            }
            nodeStart then fan then nodeFinish
        },
    )

    /** One node incrementing the counter, with an edge back to itself until the counter reached [iterations]. */
    @JvmStatic
    public fun loop(iterations: Int): GraphAIAgent<Int, Int> = agent(
        strategy<Int, Int>("loop-$iterations") {
            val step by node<Int, Int>("step") { it + 1 }
            nodeStart then step
            edge(step forwardTo step onCondition { it < iterations })
            edge(step forwardTo nodeFinish onCondition { it >= iterations })
        },
    )

    /**
     * A chain of [length] nodes, each appending a distinct 400-byte string to the list it is given and passing it on;
     * input: a new empty list per run.
     */
    @JvmStatic
    public fun stateGrowth(length: Int): GraphAIAgent<MutableList<String>, MutableList<String>> = agent(
        strategy<MutableList<String>, MutableList<String>>("growth-$length") {
            var last: AIAgentNodeBase<*, MutableList<String>> = nodeStart
            for (i in 0 until length) {
                val payload = TrellisWorkloads.payload(i)
                val g by node<MutableList<String>, MutableList<String>>("g$i") { it.apply { add(payload) } }
                edge(last forwardTo g)
                last = g
            }
            edge(last forwardTo nodeFinish)
        },
    )

    /** A chain of [count] subgraphs, each a chain of [length] counting nodes (input 0). */
    @JvmStatic
    public fun subgraphChain(count: Int, length: Int): GraphAIAgent<Int, Int> = agent(
        strategy<Int, Int>("sub-chain-$count-$length") {
            var last: AIAgentNodeBase<*, Int> = nodeStart
            for (s in 0 until count) {
                val sub by subgraph<Int, Int>("s$s") {
                    var inner: AIAgentNodeBase<*, Int> = nodeStart
                    for (i in 0 until length) {
                        val c by node<Int, Int>("s$s-c$i") { it + 1 }
                        edge(inner forwardTo c)
                        inner = c
                    }
                    edge(inner forwardTo nodeFinish)
                }
                edge(last forwardTo sub)
                last = sub
            }
            edge(last forwardTo nodeFinish)
        },
    )

    /** `agent.run(input)` inside `runBlocking`. */
    @JvmStatic
    public fun <I, O> run(agent: GraphAIAgent<I, O>, input: I): O = runBlocking { agent.run(input) }

    /** The input of the state-growth workload: a new empty list. */
    @JvmStatic
    public fun growthInput(): MutableList<String> = ArrayList()

    /** A prompt executor for agents whose nodes never call an LLM: it fails if it is ever called. */
    private object NoLlm : PromptExecutor() {
        private fun unused(): Nothing = error("the benchmark workloads call no LLM")

        override suspend fun execute(
            prompt: Prompt,
            model: LLModel,
            tools: List<ToolDescriptor>,
        ): Message.Assistant = unused()

        override fun executeStreaming(
            prompt: Prompt,
            model: LLModel,
            tools: List<ToolDescriptor>,
        ): Flow<StreamFrame> = unused()

        override suspend fun moderate(prompt: Prompt, model: LLModel): ModerationResult = unused()

        override fun close() {}
    }
}
