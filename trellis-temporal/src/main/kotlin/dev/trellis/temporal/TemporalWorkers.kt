package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.temporal.internal.GraphChecks
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
     * @throws IllegalArgumentException when two graphs share an id, a node declares a policy that Temporal cannot
     *   run (a compensation or a result cache, `docs/temporal.md`), or [TemporalOptions.localNodes] names no node.
     */
    @JvmStatic
    @JvmOverloads
    public fun register(
        worker: Worker,
        graphs: List<Graph>,
        options: TemporalOptions = TemporalOptions(),
        onExecution: (String) -> Unit = {},
    ) {
        val versions = GraphVersions()
        for (graph in graphs) {
            require(
                versions.all()[graph.id] == null,
            ) { "Two graphs have id '${graph.id}'; give each graph its own id (or register versions: GraphVersions)." }
            versions.add(1, graph)
        }
        register(worker, versions, options, onExecution)
    }

    /**
     * Registers the [versions] of graphs on [worker]: new runs take each graph's latest version, replayed runs the
     * version their history recorded (see [GraphVersions]).
     */
    @JvmStatic
    @JvmOverloads
    public fun register(
        worker: Worker,
        versions: GraphVersions,
        options: TemporalOptions = TemporalOptions(),
        onExecution: (String) -> Unit = {},
    ) {
        val byId = versions.all().mapValues { java.util.TreeMap(it.value) }
        GraphChecks.check(byId.values.flatMap { it.values }, options)
        worker.registerWorkflowImplementationFactory(
            GraphWorkflow::class.java,
            Functions.Func<GraphWorkflow> { GraphWorkflowImpl(byId, options) },
        )
        worker.registerActivitiesImplementations(
            NodeActivityImpl(byId, options.maxValueBytes, options.liveEvents, onExecution),
        )
    }
}
