package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import io.temporal.api.enums.v1.EventType
import io.temporal.testing.TestWorkflowEnvironment
import io.temporal.worker.WorkerOptions
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.flow.transformWhile
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.time.Duration
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.time.Duration.Companion.seconds

/**
 * The caller's stream shows only events of committed progress (docs/temporal.md, "Events"): a workflow task that
 * fails after publishing events leaves them on the side channel, and the stream drops them; the replay's events take
 * their place, each once. Here the task that first decides a route publishes its decision's events, then is held past
 * the worker's deadlock timeout (in the side channel's `publish`, on the workflow thread), so Temporal fails it; the
 * replay decides otherwise.
 */
class CommittedEventsTest {
    object S : StateSchema("committed") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** The first decision of the route (in the task that fails) is `left`; every later one, the replay's, `right`. */
    private val firstDecision = AtomicBoolean(true)

    private val fork: Graph = graph("fork", S) {
        val a = node("a") { set(S.log, listOf("a")) }
        val left = node("left") { set(S.log, listOf("left")) }
        val right = node("right") { set(S.log, listOf("right")) }
        start(a)
        a.route(left, right) { if (firstDecision.getAndSet(false)) left else right }
    }

    /** Holds the workflow thread for two seconds once it published that `left` started. */
    private class Stalling(val inner: InMemoryLiveEvents) : LiveEvents {
        override fun publish(event: LiveEvent) {
            inner.publish(event)
            val published = event.event
            if (published is RunEvent.NodeStarted && published.path == "left") Thread.sleep(2_000)
        }

        override fun subscribe(runId: String, graph: Graph) = inner.subscribe(runId, graph)
    }

    private val live = InMemoryLiveEvents()
    private val env = TestWorkflowEnvironment.newInstance()

    init {
        val worker = env.newWorker(
            "committed",
            WorkerOptions.newBuilder().setDefaultDeadlockDetectionTimeout(500).build(),
        )
        TemporalWorkers.register(worker, listOf(fork), TemporalOptions(liveEvents = Stalling(live)))
        env.start()
    }

    @AfterEach
    fun tearDown() {
        env.close()
    }

    private fun describe(event: RunEvent): String = when (event) {
        is RunEvent.NodeEvent -> "${event.javaClass.simpleName}:${event.path}#${event.execution}"
        is RunEvent.EdgeTaken -> "EdgeTaken:${event.from}->${event.to}"
        else -> event.javaClass.simpleName
    }

    @Test
    fun `events of a failed workflow task do not reach the caller`(): Unit = runBlocking {
        val runner = TemporalRunner(env.workflowClient, "committed", live)
        val run = runner.start(fork, runId = "phantom-1")
        val streamed = withTimeout(120.seconds) { run.events().toList() }
        val result = run.awaitBlocking()

        result.status shouldBe Status.COMPLETED
        result.state[S.log] shouldBe listOf("a", "right")
        // The history has the failed task, and the side channel the events that task published before it failed.
        val history = env.workflowClient.fetchHistory("phantom-1").events.map { it.eventType }
        history shouldContain EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
        val published = withTimeout(60.seconds) {
            live.subscribe("phantom-1", fork).transformWhile {
                emit(it.event)
                !(it.event.isTerminal && it.event is RunEvent.RunCompleted)
            }.toList()
        }
        published.map(::describe) shouldContain "EdgeTaken:a->left"

        // The caller sees the committed run only: the local run's events (whose route goes right), each once.
        val local = fork.events().toList()
        streamed.map(::describe) shouldBe local.map(::describe)
        streamed.map { it.sequence } shouldBe local.map { it.sequence }
    }

    @Test
    fun `without the deadlock timeout the first decision stands`() {
        // Guards the test above: a worker that allows the stall its two seconds has no failed task.
        val patient = TestWorkflowEnvironment.newInstance()
        try {
            val worker = patient.newWorker(
                "patient",
                WorkerOptions.newBuilder().setDefaultDeadlockDetectionTimeout(Duration.ofMinutes(2).toMillis()).build(),
            )
            TemporalWorkers.register(worker, listOf(fork), TemporalOptions(liveEvents = Stalling(InMemoryLiveEvents())))
            patient.start()
            val result = TemporalRunner(patient.workflowClient, "patient").start(fork, runId = "patient-1")
                .awaitBlocking()
            result.state[S.log] shouldBe listOf("a", "left")
            patient.workflowClient.fetchHistory("patient-1").events.map { it.eventType }
                .contains(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) shouldBe false
        } finally {
            patient.close()
        }
    }
}
