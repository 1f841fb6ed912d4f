package dev.trellis.bench

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking

/** The state of every benchmark graph: a counter and an appended log. */
public object BenchState : StateSchema("bench") {
    /** Incremented by the chain and loop nodes. */
    public val n: StateKey<Int> = key("n", default = 0)

    /** Appended to by the fan-out branches and the state-growth chain. */
    public val log: StateKey<List<String>> = key("log", default = emptyList<String>(), reducer = Reducer.append())
}

/** The benchmark workloads as Trellis graphs, and blocking entry points for JMH (which is plain Java). */
public object TrellisWorkloads {
    /** Number of nodes of the chain and state-growth workloads. */
    public const val CHAIN: Int = 100

    /** Number of parallel branches of the fan-out workload. */
    public const val FAN_OUT: Int = 64

    /** Number of iterations of the loop workload. */
    public const val LOOP: Int = 1000

    /** Size in bytes (ASCII chars) of each string appended by the state-growth workload. */
    public const val PAYLOAD: Int = 400

    /** One node incrementing the counter. */
    public fun oneNode(): Graph = graph("one-node", BenchState) {
        val only = node("only") { update(BenchState.n) { it + 1 } }
        start(only)
    }

    /** A chain of [length] nodes, each incrementing the counter. */
    public fun chain(length: Int = CHAIN): Graph = graph("chain-$length", BenchState) {
        val nodes = (0 until length).map { i -> node("c$i") { update(BenchState.n) { it + 1 } } }
        start(nodes[0])
        for (i in 1 until length) nodes[i - 1] then nodes[i]
    }

    /** entry -> [width] parallel branches, each appending its id to the log -> join. */
    public fun fanOut(width: Int = FAN_OUT): Graph = graph("fan-out-$width", BenchState) {
        val entry = node("entry") { }
        val join = node("join") { }
        val labels = Array(width) { "b$it" }
        for (i in 0 until width) {
            val label = labels[i]
            val branch = node(label) { set(BenchState.log, listOf(label)) }
            entry then branch
            branch then join
        }
        start(entry)
    }

    /** One node incrementing the counter, routed back to itself until it reached [iterations]. */
    public fun loop(iterations: Int = LOOP): Graph = graph("loop-$iterations", BenchState) {
        val step = node("step") { update(BenchState.n) { it + 1 } }
        start(step)
        step.route(step, END) { if (it[BenchState.n] < iterations) step else END }
        config { maxNodeExecutions = iterations }
    }

    /** A chain of [length] nodes, each appending a distinct [PAYLOAD]-byte string to the log. */
    public fun stateGrowth(length: Int = CHAIN): Graph = graph("growth-$length", BenchState) {
        val nodes = (0 until length).map { i ->
            val update = listOf(payload(i))
            node("g$i") { set(BenchState.log, update) }
        }
        start(nodes[0])
        for (i in 1 until length) nodes[i - 1] then nodes[i]
    }

    /** A distinct string of [PAYLOAD] ASCII characters for node [i] (distinct from its first characters on). */
    @JvmStatic
    public fun payload(i: Int): String {
        val prefix = "node-$i:"
        return prefix + "x".repeat(PAYLOAD - prefix.length)
    }

    /** The input of every run: all defaults. */
    public fun input(): State = BenchState.initialState()

    /** `Graph.invoke` inside `runBlocking`. */
    @JvmStatic
    public fun invoke(graph: Graph, input: State): RunResult = runBlocking { graph.invoke(input) }

    /** `Graph.run` inside `runBlocking`, collecting every event; returns how many there were. */
    @JvmStatic
    public fun runCollect(graph: Graph, input: State): Int = runBlocking {
        var count = 0
        graph.events(input).collect { count++ }
        count
    }

    /** Default options with a given [runId] and [checkpointing]. */
    @JvmStatic
    public fun options(runId: String, checkpointing: Checkpointing): RunOptions =
        RunOptions(runId = runId, checkpointing = checkpointing)

    /** `Graph.invoke` with [options] (e.g. checkpointing) inside `runBlocking`. */
    @JvmStatic
    public fun invoke(
        graph: Graph,
        input: State,
        options: RunOptions,
    ): RunResult = runBlocking { graph.invoke(input, options) }

    /** `Graph.invoke` with [options], then `store.delete(runId)`, so a long benchmark does not fill the heap. */
    @JvmStatic
    public fun invokeThenDelete(graph: Graph, input: State, options: RunOptions, store: CheckpointStore): RunResult =
        runBlocking {
            val result = graph.invoke(input, options)
            store.delete(result.runId)
            result
        }

    /** Number of checkpoints of [runId] in [store] and the sum of their payload lengths (chars), in that order. */
    @JvmStatic
    public fun checkpointPayloads(store: CheckpointStore, runId: String): LongArray = runBlocking {
        val history = store.history(runId)
        longArrayOf(history.size.toLong(), history.sumOf { it.payload.length.toLong() })
    }

    /** The payload of checkpoint [sequence] of [runId] in [store], or null. */
    @JvmStatic
    public fun checkpointPayload(store: CheckpointStore, runId: String, sequence: Long): String? =
        runBlocking { store.get(runId, sequence)?.payload }

    /** An empty `runBlocking`, the fixed cost included in every other Trellis figure. */
    @JvmStatic
    public fun emptyRunBlocking(): Int = runBlocking { 1 }

    /** `runBlocking` launching [width] empty coroutines on `Dispatchers.Default` and joining them. */
    @JvmStatic
    public fun launchEmpty(width: Int): Int = runBlocking {
        coroutineScope { repeat(width) { launch(Dispatchers.Default) { } } }
        width
    }

    /**
     * `runBlocking` launching [width] empty coroutines on its own thread (its event loop) and joining them: the floor
     * of the fan-out workload when its branches do not suspend, as the runtime starts them where the run is driven.
     */
    @JvmStatic
    public fun launchEmptyOnOneThread(width: Int): Int = runBlocking {
        coroutineScope { repeat(width) { launch { } } }
        width
    }

    /** The counter of a result. */
    @JvmStatic
    public fun counter(result: RunResult): Int = result.state[BenchState.n]

    /** The log of a result. */
    @JvmStatic
    public fun log(result: RunResult): List<String> = result.state[BenchState.log]
}
