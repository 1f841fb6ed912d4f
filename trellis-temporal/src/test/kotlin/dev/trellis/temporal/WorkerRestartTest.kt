package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Status
import io.kotest.matchers.shouldBe
import io.temporal.testing.TestWorkflowEnvironment
import io.temporal.worker.WorkerFactory
import io.temporal.worker.WorkerOptions
import kotlinx.coroutines.awaitCancellation
import org.junit.jupiter.api.Test
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger

/**
 * A worker killed mid-run (its factory shut down while a node runs) and a new worker started: the run finishes on the
 * new worker, which replays the workflow's history, and no node whose activity completed runs again.
 */
class WorkerRestartTest {
    object S : StateSchema("restart") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** Activity executions per node path, on any worker. */
    private val executions = ConcurrentHashMap<String, AtomicInteger>()

    /** Node bodies that ran to their end, per node id. */
    private val completed = ConcurrentHashMap<String, AtomicInteger>()
    private val slowStarted = CountDownLatch(1)
    private val firstSlow = AtomicBoolean(true)

    private fun done(node: String) {
        completed.getOrPut(node) { AtomicInteger() }.incrementAndGet()
    }

    private val graph: Graph = graph("restart", S) {
        val a = node("a") {
            set(S.log, listOf("a"))
            done("a")
        }
        val b = node("b") {
            set(S.log, listOf("b"))
            done("b")
        }
        val slow = node("slow") {
            if (firstSlow.compareAndSet(true, false)) {
                slowStarted.countDown()
                awaitCancellation() // until its worker is shut down
            }
            set(S.log, listOf("slow"))
            done("slow")
        }
        val c = node("c") {
            set(S.log, listOf("c"))
            done("c")
        }
        start(a)
        a then b
        b then slow
        slow then c
    }

    private fun worker(env: TestWorkflowEnvironment): WorkerFactory {
        val factory = WorkerFactory.newInstance(env.workflowClient)
        // No sticky routing: every workflow task comes from the task queue with the full history and is replayed, so
        // the dead worker's tasks go to the new one at once, and the scheduler is rebuilt by replay at every step.
        val options = WorkerOptions.newBuilder().setStickyQueueScheduleToStartTimeout(Duration.ZERO).build()
        TemporalWorkers.register(
            factory.newWorker(TemporalHarness.QUEUE, options),
            listOf(graph),
            // A lost attempt is started again after this, if its worker could not report it.
            TemporalOptions(activityTimeout = Duration.ofSeconds(20)),
        ) { path -> executions.getOrPut(path) { AtomicInteger() }.incrementAndGet() }
        factory.start()
        return factory
    }

    @Test
    fun `a run survives its worker's shutdown without running completed nodes again`() {
        TestWorkflowEnvironment.newInstance().use { env ->
            env.start()
            val first = worker(env)
            val run = TemporalRunner(env.workflowClient, TemporalHarness.QUEUE).start(graph, runId = "restart-1")
            slowStarted.await(60, TimeUnit.SECONDS) shouldBe true

            first.shutdownNow()
            first.awaitTermination(60, TimeUnit.SECONDS)
            val second = worker(env)
            try {
                val result = run.resultAsync().get(180, TimeUnit.SECONDS)

                result.status shouldBe Status.COMPLETED
                result.state[S.log] shouldBe listOf("a", "b", "slow", "c")
                completed.mapValues { it.value.get() } shouldBe mapOf("a" to 1, "b" to 1, "slow" to 1, "c" to 1)
                // Only the attempt the shutdown interrupted ran again.
                executions.mapValues { it.value.get() } shouldBe mapOf("a" to 1, "b" to 1, "slow" to 2, "c" to 1)
                result.nodes.mapValues { it.value.executions to it.value.attempts } shouldBe
                    mapOf("a" to (1 to 1), "b" to (1 to 1), "slow" to (1 to 1), "c" to (1 to 1))
            } finally {
                second.shutdownNow()
            }
        }
    }
}
