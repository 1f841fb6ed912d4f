package dev.trellis.temporal

import dev.trellis.graph.Composite
import dev.trellis.graph.Graph
import dev.trellis.temporal.internal.GraphWorkflow
import dev.trellis.temporal.internal.GraphWorkflowImpl
import dev.trellis.temporal.internal.NodeActivityImpl
import io.temporal.worker.Worker
import io.temporal.workflow.Functions

/**
 * Registers Trellis graphs on a Temporal [Worker]: the workflow that runs their scheduler and the activity that runs
 * their nodes' bodies. Every worker of a task queue registers the same graphs (same ids and versions).
 *
 * ```kotlin
 * val worker = factory.newWorker("research")
 * TemporalWorkers.register(worker, listOf(research))
 * factory.start()
 * ```
 */
public object TemporalWorkers {
    /**
     * Registers [graphs] (their subgraphs included) on [worker] with [options]; [onExecution], when given, is told
     * the node path of each activity execution on this worker (for counting in tests and metrics).
     *
     * @throws IllegalArgumentException when two graphs share an id, or a map node runs a plain body per task (its
     *   tasks would run in workflow code; give the map node a subgraph instead).
     */
    @JvmStatic
    @JvmOverloads
    public fun register(
        worker: Worker,
        graphs: List<Graph>,
        options: TemporalOptions = TemporalOptions(),
        onExecution: (String) -> Unit = {},
    ) {
        val byId = LinkedHashMap<String, Graph>()
        for (graph in graphs) {
            require(
                byId.put(graph.id, graph) == null,
            ) { "Two graphs have id '${graph.id}'; give each graph its own id." }
            check(graph)
        }
        worker.registerWorkflowImplementationFactory(
            GraphWorkflow::class.java,
            Functions.Func<GraphWorkflow> { GraphWorkflowImpl(byId, options) },
        )
        worker.registerActivitiesImplementations(NodeActivityImpl(byId, options.maxValueBytes, onExecution))
    }

    private fun check(graph: Graph) {
        for (node in graph.nodes) {
            val composite = node.composite
            require(composite !is Composite.Map || composite.body == null) {
                "Map node '${node.id}' of graph '${graph.id}' runs a body per task, which trellis-temporal " +
                    "cannot run as activities yet; give the map node a subgraph (map(..., graph = ...)) instead."
            }
            node.subgraph?.let(::check)
        }
    }
}
