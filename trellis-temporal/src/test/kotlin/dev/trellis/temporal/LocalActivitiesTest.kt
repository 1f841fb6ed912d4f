package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeError
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.NodeTimeoutException
import dev.trellis.runtime.Status
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.temporal.api.enums.v1.EventType
import io.temporal.api.history.v1.HistoryEvent
import io.temporal.testing.TestWorkflowEnvironment
import io.temporal.worker.WorkerFactory
import io.temporal.worker.WorkerOptions
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.runInterruptible
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.io.IOException
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * Nodes named in `TemporalOptions.localNodes` run as local activities (`docs/temporal.md`, "Local activities and
 * heartbeats"): same statuses, counts and final states as the local run, Trellis's retries and timeouts, no completed
 * node run again after a worker's loss; their attempts are markers in the history, not activity tasks.
 */
class LocalActivitiesTest {
    /** A local activity's attempt in the history: a marker of the SDK's local-activity kind. */
    private fun HistoryEvent.isLocalActivity(): Boolean =
        eventType == EventType.EVENT_TYPE_MARKER_RECORDED && markerRecordedEventAttributes.markerName == "LocalActivity"

    object S : StateSchema("local-activities") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val n = key("n", default = 0)
        val error = key<NodeError?>("error", default = null)
    }

    /** A diamond whose branches loop, local and remote nodes mixed. */
    private val mixed: Graph = graph("mixed", S) {
        val split = node("split") { set(S.log, listOf("split")) }
        val left = node("left") { set(S.log, listOf("left")) }
        val step = node("step") { set(S.n, get(S.n) + 1) }
        val join = node("join") { set(S.log, listOf("join at ${get(S.n)}")) }
        start(split)
        split then left
        split then step
        step.route(step, join) { if (it[S.n] < 4) step else join }
        left then join
    }

    /** Retries of a local node, a local node failing after its retries, routed to a local handler. */
    private val retried: Graph = graph("retried", S) {
        val flaky = node("flaky", retry = Retry.fixed(3, 10.milliseconds)) {
            if (attempt < 3) throw IOException("attempt $attempt failed")
            set(S.log, listOf("flaky ok on $attempt"))
        }
        val broken = node("broken", retry = Retry.fixed(2, 10.milliseconds)) { throw IOException("broken") }
        val fallback = node("fallback") { set(S.log, listOf("fallback after ${get(S.error)?.attempts}")) }
        start(flaky)
        flaky then broken
        broken.onFailure(fallback, error = S.error)
    }

    private val options = TemporalOptions(localNodes = setOf("split", "step", "join", "flaky", "broken", "fallback"))

    @Test
    fun `local nodes end as locally, as markers in the history`() {
        TemporalHarness(listOf(mixed, retried), options).use { h ->
            for (graph in listOf(mixed, retried)) {
                val expected = TemporalHarness.local(graph)
                val actual = h.runner.start(graph, runId = "local-${graph.id}").awaitBlocking()
                withClue(graph.id) {
                    actual.status shouldBe expected.status
                    actual.state[S.log].sorted() shouldBe expected.state[S.log].sorted()
                    actual.state[S.n] shouldBe expected.state[S.n]
                    actual.state[S.error]?.attempts shouldBe expected.state[S.error]?.attempts
                    actual.nodes.mapValues { Triple(it.value.status, it.value.executions, it.value.attempts) } shouldBe
                        expected.nodes.mapValues { Triple(it.value.status, it.value.executions, it.value.attempts) }
                }
            }
            h.executions("step") shouldBe 4
            h.executions("flaky") shouldBe 3
            h.executions("broken") shouldBe 2
            // Only `left` is a (remote) activity; each local attempt is a marker.
            val mixedEvents = h.env.workflowClient.fetchHistory("local-mixed").events
            mixedEvents.count { it.eventType == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED } shouldBe 1
            mixedEvents.count { it.isLocalActivity() } shouldBe 6 // split, step ×4, join
            val retriedEvents = h.env.workflowClient.fetchHistory("local-retried").events
            retriedEvents.count { it.eventType == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED } shouldBe 0
            retriedEvents.count { it.isLocalActivity() } shouldBe 6 // flaky ×3, broken ×2, fallback
        }
    }

    @Test
    fun `a local node's timeout fails its attempt as locally`() {
        val release = CountDownLatch(1)
        val timed = graph("local-timeout", S) {
            val slow = node("slow", timeout = 2.seconds) {
                runInterruptible { release.await() }
            }
            val fallback = node("fallback") { set(S.log, listOf("timed out")) }
            start(slow)
            slow.onFailure(fallback, error = S.error)
        }
        TemporalHarness(listOf(timed), TemporalOptions(localNodes = setOf("slow", "fallback"))).use { h ->
            try {
                val result = h.runner.start(timed, runId = "local-timeout").awaitBlocking()
                result.status shouldBe Status.COMPLETED
                result.node("slow").status shouldBe Status.FAILED
                result.state[S.log] shouldBe listOf("timed out")
                result.state[S.error]!!.type shouldBe NodeTimeoutException::class.java.name
            } finally {
                release.countDown()
            }
        }
    }

    @Test
    fun `an id that names no node is refused with the ids there are`() {
        TestWorkflowEnvironment.newInstance().use { env ->
            val error = assertThrows<IllegalArgumentException> {
                TemporalWorkers.register(
                    env.newWorker("q"),
                    listOf(mixed),
                    TemporalOptions(localNodes = setOf("spilt")),
                )
            }
            error.message!! shouldContain "[spilt]"
            error.message!! shouldContain "[join, left, split, step]"
        }
    }

    @Test
    fun `a run with local nodes survives its worker's shutdown without running completed nodes again`() {
        val scenario = RestartScenario(
            "local-restart",
            listOf("a"),
            TemporalOptions(activityTimeout = Duration.ofSeconds(20), localNodes = setOf("a", "slow", "c")),
        )
        TestWorkflowEnvironment.newInstance().use { env ->
            env.start()
            val first = scenario.worker(env)
            val run = TemporalRunner(
                env.workflowClient,
                TemporalHarness.QUEUE,
            ).start(scenario.graph, runId = "local-restart")
            scenario.slowStarted.await(60, TimeUnit.SECONDS) shouldBe true
            // A local attempt is recorded when the workflow task that ran it completes — while `slow` runs, the
            // worker completes it at 80% of the task's timeout (docs/temporal.md): wait for `a`'s marker.
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
            while (env.workflowClient.fetchHistory("local-restart").events.none { it.isLocalActivity() }) {
                check(System.nanoTime() < deadline) { "a's marker was not recorded" }
                Thread.sleep(100)
            }

            first.shutdownNow()
            first.awaitTermination(60, TimeUnit.SECONDS)
            val second = scenario.worker(env)
            try {
                val result = run.resultAsync().get(180, TimeUnit.SECONDS)

                result.status shouldBe Status.COMPLETED
                result.state[RestartScenario.S.log] shouldBe listOf("a", "slow", "c")
                scenario.completed shouldBe mapOf("a" to 1, "slow" to 1, "c" to 1)
                scenario.executions shouldBe mapOf("a" to 1, "slow" to 2, "c" to 1)
                result.nodes.mapValues { it.value.executions to it.value.attempts } shouldBe
                    mapOf("a" to (1 to 1), "slow" to (1 to 1), "c" to (1 to 1))
            } finally {
                second.shutdownNow()
            }
        }
    }
}
