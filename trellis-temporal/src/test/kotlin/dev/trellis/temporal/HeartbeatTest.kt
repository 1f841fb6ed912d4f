package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Status
import dev.trellis.temporal.internal.GraphWorkflow
import dev.trellis.temporal.internal.GraphWorkflowImpl
import dev.trellis.temporal.internal.Heartbeats
import dev.trellis.temporal.internal.NodeActivityImpl
import io.kotest.matchers.comparables.shouldBeGreaterThanOrEqualTo
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.temporal.api.enums.v1.EventType
import io.temporal.testing.TestEnvironmentOptions
import io.temporal.testing.TestWorkflowEnvironment
import io.temporal.worker.WorkerFactory
import io.temporal.worker.WorkerOptions
import io.temporal.workflow.Functions
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import org.junit.jupiter.api.Test
import java.time.Duration
import java.util.TreeMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/**
 * Node activities heartbeat under `TemporalOptions.heartbeatTimeout` (`docs/temporal.md`, "Local activities and
 * heartbeats"): an attempt whose worker died is run again after the heartbeat timeout, not the start-to-close
 * timeout; a live worker's long node is not; a cancelled attempt's body is cancelled.
 */
class HeartbeatTest {
    object S : StateSchema("heartbeats") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val started = CountDownLatch(1)
    private val release = CountDownLatch(1)
    private val first = AtomicBoolean(true)
    private val executions = AtomicInteger()

    private val graph: Graph = graph("heartbeats", S) {
        val long = node("long") {
            executions.incrementAndGet()
            if (first.compareAndSet(true, false)) {
                started.countDown()
                // The "dead" worker's attempt: its thread hangs (until the test ends) and reports nothing.
                while (!release.await(1, TimeUnit.SECONDS)) Unit
            }
            set(S.log, listOf("long"))
        }
        val after = node("after") { set(S.log, listOf("after")) }
        start(long)
        long then after
    }

    private fun options(heartbeat: Duration?) =
        TemporalOptions(activityTimeout = START_TO_CLOSE, heartbeatTimeout = heartbeat)

    /** A worker whose process is as good as dead for its activity: it sends no heartbeats. */
    private fun deadWorker(env: TestWorkflowEnvironment, options: TemporalOptions): WorkerFactory {
        val factory = WorkerFactory.newInstance(env.workflowClient)
        val worker = factory.newWorker(
            QUEUE,
            WorkerOptions.newBuilder().setStickyQueueScheduleToStartTimeout(Duration.ZERO).build(),
        )
        val graphs = mapOf(graph.id to TreeMap(mapOf(1 to graph)))
        worker.registerWorkflowImplementationFactory(
            GraphWorkflow::class.java,
            Functions.Func<GraphWorkflow> { GraphWorkflowImpl(graphs, options) },
        )
        worker.registerActivitiesImplementations(
            NodeActivityImpl(graphs, options.maxValueBytes, null, {}, Heartbeats(false)),
        )
        factory.start()
        return factory
    }

    /**
     * Runs the graph, losing the first worker while `long` runs; answers the run's time from its start to its end in
     * the history. (The test server does not skip time while an activity runs: the timeouts fire in real time.)
     */
    private fun runLosingTheWorker(heartbeat: Duration?): Duration {
        TestWorkflowEnvironment.newInstance().use { env ->
            env.start()
            val options = options(heartbeat)
            val dead = deadWorker(env, options)
            val run = TemporalRunner(env.workflowClient, QUEUE).start(graph, runId = "heartbeats")
            started.await(60, TimeUnit.SECONDS) shouldBe true
            dead.shutdown() // stops polling; the hung attempt's thread stays, silent
            val live = WorkerFactory.newInstance(env.workflowClient)
            TemporalWorkers.register(live.newWorker(QUEUE), listOf(graph), options)
            live.start()
            try {
                val result = run.resultAsync().get(180, TimeUnit.SECONDS)
                result.status shouldBe Status.COMPLETED
                result.state[S.log] shouldBe listOf("long", "after")
                result.node("long").attempts shouldBe 1 // the re-run is Temporal's, not a Trellis attempt
                executions.get() shouldBe 2
                val events = env.workflowClient.fetchHistory("heartbeats").events
                // `long`'s activity completed on its second (Temporal) attempt, the first having timed out.
                events.single {
                    it.eventType == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
                        it.activityTaskStartedEventAttributes.attempt == 2
                }
                return Duration.ofSeconds(events.last().eventTime.seconds - events.first().eventTime.seconds)
            } finally {
                release.countDown()
                live.shutdownNow()
                dead.shutdownNow()
            }
        }
    }

    @Test
    fun `an attempt whose worker died runs again after the heartbeat timeout`() {
        runLosingTheWorker(Duration.ofSeconds(2)) shouldBeLessThan START_TO_CLOSE
    }

    @Test
    fun `without heartbeats it runs again only after the start-to-close timeout`() {
        runLosingTheWorker(null) shouldBeGreaterThanOrEqualTo START_TO_CLOSE
    }

    /** Real time: the heartbeats of a live worker keep a node longer than the heartbeat timeout alive. */
    @Test
    fun `a live worker's long node is not timed out, and a timed-out attempt's body is cancelled`() {
        val realTime = TestEnvironmentOptions.newBuilder().setUseTimeskipping(false).build()
        val bodyCancelled = CountDownLatch(1)
        val runs = AtomicInteger()
        val g = graph("heartbeats-live", S) {
            val long = node("long") {
                runs.incrementAndGet()
                delay(10.seconds) // over three heartbeat timeouts
                set(S.log, listOf("long"))
            }
            val stuck = node("stuck", timeout = 2.seconds) {
                try {
                    awaitCancellation()
                } finally {
                    bodyCancelled.countDown()
                }
            }
            val after = node("after") { set(S.log, listOf("after")) }
            start(long)
            long then stuck
            stuck.onFailure(after)
        }
        TestWorkflowEnvironment.newInstance(realTime).use { env ->
            TemporalWorkers.register(
                env.newWorker(QUEUE),
                listOf(g),
                TemporalOptions(heartbeatTimeout = Duration.ofSeconds(3)),
            )
            env.start()
            val result = TemporalRunner(env.workflowClient, QUEUE).start(g, runId = "heartbeats-live").awaitBlocking()
            result.status shouldBe Status.COMPLETED
            result.state[S.log] shouldBe listOf("long", "after")
            runs.get() shouldBe 1
            result.node("stuck").status shouldBe Status.FAILED
            // The activity's cancellation reached the body at a heartbeat (without one it would run on, abandoned).
            bodyCancelled.await(30, TimeUnit.SECONDS) shouldBe true
        }
    }

    private companion object {
        const val QUEUE = "trellis-heartbeats"

        /** The start-to-close timeout of the node's activity, far above the heartbeat timeout. */
        val START_TO_CLOSE: Duration = Duration.ofSeconds(30)
    }
}
