package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.temporal.testing.TestWorkflowEnvironment
import io.temporal.worker.WorkerFactory
import io.temporal.worker.WorkerOptions
import kotlinx.coroutines.awaitCancellation
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger

/**
 * A worker killed mid-run, as `WorkerRestartTest` and `LocalActivitiesTest` stage it: a chain of [before], then `slow`
 * (whose first attempt waits until its worker is shut down: [slowStarted] says it is running), then `c`, registered by
 * [worker] with [options]; it counts activity executions per path ([executions]) and node bodies run to their end
 * ([completed]).
 */
internal class RestartScenario(id: String, before: List<String>, private val options: TemporalOptions) {
    object S : StateSchema("restart") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val executionCounts = ConcurrentHashMap<String, AtomicInteger>()
    private val completedCounts = ConcurrentHashMap<String, AtomicInteger>()
    private val firstSlow = AtomicBoolean(true)

    /** Counted down when `slow`'s first attempt runs. */
    val slowStarted = CountDownLatch(1)

    /** Activity executions per node path, on any worker. */
    val executions: Map<String, Int> get() = executionCounts.mapValues { it.value.get() }

    /** Node bodies that ran to their end, per node id. */
    val completed: Map<String, Int> get() = completedCounts.mapValues { it.value.get() }

    private fun done(node: String) {
        completedCounts.getOrPut(node) { AtomicInteger() }.incrementAndGet()
    }

    val graph: Graph = graph(id, S) {
        val chain = (before + "slow" + "c").map { name ->
            node(name) {
                if (name == "slow" && firstSlow.compareAndSet(true, false)) {
                    slowStarted.countDown()
                    awaitCancellation() // until its worker is shut down
                }
                set(S.log, listOf(name))
                done(name)
            }
        }
        start(chain.first())
        chain.zipWithNext { a, b -> a then b }
    }

    /** A started worker factory running [graph]. */
    fun worker(env: TestWorkflowEnvironment): WorkerFactory {
        val factory = WorkerFactory.newInstance(env.workflowClient)
        // No sticky routing: every workflow task comes from the task queue with the full history and is replayed, so
        // the dead worker's tasks go to the new one at once, and the scheduler is rebuilt by replay at every step.
        val workerOptions = WorkerOptions.newBuilder().setStickyQueueScheduleToStartTimeout(
            java.time.Duration.ZERO,
        ).build()
        TemporalWorkers.register(
            factory.newWorker(TemporalHarness.QUEUE, workerOptions),
            listOf(graph),
            options,
        ) { path ->
            executionCounts.getOrPut(path) { AtomicInteger() }.incrementAndGet()
        }
        factory.start()
        return factory
    }
}
