package dev.trellis.springboot

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.javaapi.JavaRunOptions
import dev.trellis.javaapi.Trellis
import dev.trellis.javaapi.TrellisRunner
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunResult
import kotlinx.coroutines.future.await

/**
 * The runners of the application's graphs: every `Graph` bean, by its id, run with the starter's [options] —
 * checkpoints in the application's store, the drain on shutdown, metrics and tracing when present.
 *
 * ```java
 * @Bean Graph greeting() { ... }                                  // a graph is a bean
 * RunResult result = runners.runner("greeting").invoke(Map.of("name", "Ada"));
 * ```
 */
public class TrellisRunners internal constructor(
    graphs: List<Graph>,
    /** The options of every run: checkpointing, the drain control and the instrumentation. */
    public val options: JavaRunOptions,
    /** The checkpoint store of the runs, or null when `trellis.store.type=none`. */
    public val store: CheckpointStore?,
    /** The control the runs share; the starter drains it on shutdown. */
    public val control: RunControl,
    private val closeStore: Boolean,
) : AutoCloseable {
    /** The graphs, by id. */
    public val graphs: Map<String, Graph> = graphs.associateBy { it.id }.also { byId ->
        require(byId.size == graphs.size) {
            "Two Graph beans have the same id (${graphs.groupBy { it.id }.filterValues { it.size > 1 }.keys}); " +
                "give each graph its own id."
        }
    }

    /** The runner of graph [graphId]; fails naming the graphs there are when none has that id. */
    public fun runner(graphId: String): TrellisRunner {
        val graph = graphs[graphId] ?: throw IllegalArgumentException(
            "No Graph bean has id '$graphId'; the graphs are ${graphs.keys.sorted()}. Declare the graph as a @Bean, " +
                "or fix the id.",
        )
        return Trellis.runner(graph, options)
    }

    /** The runner of [graph] (a graph that is not a bean) with the starter's options. */
    public fun runner(graph: Graph): TrellisRunner = Trellis.runner(graph, options)

    /** Runs graph [graphId] from [input] and returns its result, from Kotlin; cancelling the caller cancels the run. */
    public suspend fun invoke(graphId: String, input: State): RunResult = runner(graphId).invokeAsync(input).await()

    /** Closes the checkpoint store if the starter made it (a `CheckpointStore` bean of the application is its own). */
    override fun close() {
        if (closeStore) store?.close()
    }

    override fun toString(): String = "TrellisRunners(${graphs.keys.sorted()}, store=$store)"
}
