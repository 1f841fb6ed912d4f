package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.invoke
import io.temporal.testing.TestWorkflowEnvironment
import kotlinx.coroutines.runBlocking
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * An in-process Temporal test server with one worker running [graphs] on [QUEUE], a runner on it, and the count of
 * activity executions per node path.
 */
internal class TemporalHarness(
    graphs: List<Graph>,
    options: TemporalOptions = TemporalOptions(),
) : AutoCloseable {
    val env: TestWorkflowEnvironment = TestWorkflowEnvironment.newInstance()
    private val executions = ConcurrentHashMap<String, AtomicInteger>()
    val runner: TemporalRunner

    init {
        val worker = env.newWorker(QUEUE)
        TemporalWorkers.register(worker, graphs, options) { path ->
            executions.getOrPut(path) { AtomicInteger() }.incrementAndGet()
        }
        env.start()
        runner = TemporalRunner(env.workflowClient, QUEUE, options.liveEvents)
    }

    /** How many activity executions node [path] had. */
    fun executions(path: String): Int = executions[path]?.get() ?: 0

    override fun close() {
        env.close()
    }

    companion object {
        const val QUEUE = "trellis-test"

        /** The result of a local run of [graph] from [input], failed or not. */
        fun local(graph: Graph, input: State = graph.schema.initialState()): RunResult = runBlocking {
            try {
                graph.invoke(input)
            } catch (e: GraphRunException) {
                e.result
            }
        }
    }
}
