package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import io.kotest.assertions.withClue
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.time.Duration.Companion.seconds

/**
 * Long runs continue as new (docs/temporal.md, "Continue-as-new"): with a tiny history threshold a loop spans several
 * workflow executions, and the caller sees one run — the local run's events, counts and final state.
 */
class ContinueAsNewTest {
    object S : StateSchema("segments") {
        val n = key("n", default = 0)
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val counter: Graph = graph("counter", S) {
        val step = node("step") {
            val next = get(S.n) + 1
            emit("tick $next")
            set(S.n, next)
        }
        val done = node("done") { set(S.log, listOf("done at ${get(S.n)}")) }
        start(step)
        step.route(step, done) { if (it[S.n] < 25) step else done }
    }

    private val inner: Graph = graph("inner", S) {
        val inc = node("inc") { set(S.n, get(S.n) + 1) }
        val note = node("note") { set(S.log, listOf("inner ${get(S.n)}")) }
        start(inc)
        inc then note
    }

    /** A loop of a subgraph node alone: the run can continue as new only between two of its child runs. */
    private val nested: Graph = graph("nested", S) {
        val sub = subgraph("sub", inner) {
            input(S.n, S.n)
            output(S.n, S.n)
            output(S.log, S.log)
        }
        start(sub)
        sub.route(sub, END) { if (it[S.n] < 8) sub else END }
    }

    private val approvals: Graph = graph("approvals", S) {
        val step = node("step") { set(S.n, get(S.n) + 1) }
        val ask = node("ask") { set(S.log, listOf("${get(S.n)}: ${interrupt("Go on after ${get(S.n)}?")}")) }
        val done = node("done") { set(S.log, listOf("done")) }
        start(step)
        step.route(step, ask, done) {
            when {
                it[S.n] >= 30 -> done
                it[S.n] % 10 == 0 -> ask
                else -> step
            }
        }
        ask then step
    }

    private val live = InMemoryLiveEvents()
    private val temporal = TemporalHarness(
        listOf(counter, nested, approvals),
        TemporalOptions(liveEvents = live, continueAsNewAfterEvents = 20),
    )

    @AfterEach
    fun tearDown() {
        temporal.close()
    }

    /** How many workflow executions run [runId] took: its latest one's chain of continued-as-new executions. */
    private fun executionsOf(runId: String): Int {
        val client = temporal.env.workflowClient
        var history = client.fetchHistory(runId)
        var count = 1
        while (true) {
            val previous = history.events.first().workflowExecutionStartedEventAttributes.continuedExecutionRunId
            if (previous.isEmpty()) return count
            history = client.fetchHistory(runId, previous)
            count++
        }
    }

    /** What the caller compares of an event: its kind, node path or edge, and payload. */
    private fun describe(event: RunEvent): String = when (event) {
        is RunEvent.Custom -> "Custom:${event.path}#${event.execution}:${event.payload}"
        is RunEvent.NodeEvent -> "${event.javaClass.simpleName}:${event.path}#${event.execution}"
        is RunEvent.EdgeTaken -> "EdgeTaken:${event.from}->${event.to}"
        else -> event.javaClass.simpleName
    }

    private fun localEvents(graph: Graph): List<RunEvent> = runBlocking { graph.events().toList() }

    private fun sameAsLocal(graph: Graph, runId: String) {
        val local = TemporalHarness.local(graph)
        val localEvents = localEvents(graph)
        val run = temporal.runner.start(graph, runId = runId)
        val streamed = runBlocking { withTimeout(120.seconds) { run.events().toList() } }
        val result = run.awaitBlocking()

        executionsOf(runId) shouldBeGreaterThanOrEqual 3
        result.status shouldBe local.status
        result.state[S.n] shouldBe local.state[S.n]
        result.state[S.log] shouldBe local.state[S.log]
        for ((id, node) in local.nodes) {
            withClue(id) {
                result.node(id).executions shouldBe node.executions
                result.node(id).attempts shouldBe node.attempts
                result.node(id).status shouldBe node.status
            }
        }
        // The same events in the same order, each once: no seam of a segment, no gap, no repeat.
        streamed.map(::describe) shouldBe localEvents.map(::describe)
        // Numbered as one run's (a live payload, not yet numbered by the workflow, has sequence -1).
        streamed.filter { it !is RunEvent.Custom }.map { it.sequence } shouldBe
            localEvents.filter { it !is RunEvent.Custom }.map { it.sequence }
        run.progress() shouldContain "\"events\":${localEvents.size},"
    }

    @Test
    fun `a loop continues as new several times and ends as the local run does`() {
        sameAsLocal(counter, "loop-segments")
        temporal.executions("step") shouldBe 25 // no node ran again in a later segment
        temporal.executions("done") shouldBe 1
    }

    @Test
    fun `a loop of a subgraph node continues as new between its child runs`() {
        sameAsLocal(nested, "nested-segments")
        temporal.executions("sub/inc") shouldBe 8
    }

    @Test
    fun `interrupts are asked and answered across continue-as-new`() {
        val run = temporal.runner.start(approvals, runId = "ask-segments")
        awaitPending(run) shouldBe mapOf("ask" to "Go on after 10?")
        val firstAsked = executionsOf("ask-segments")
        run.answerBlocking("ask", "yes")
        awaitPending(run) shouldBe mapOf("ask" to "Go on after 20?")
        executionsOf("ask-segments") shouldBeGreaterThanOrEqual firstAsked + 1
        val wrong = assertThrows<IllegalArgumentException> { run.answerBlocking("step", "no") }
        wrong.message!! shouldContain "its pending interrupts are [ask]"
        run.answerBlocking("ask", "still yes")

        val result = run.awaitBlocking()
        result.status shouldBe Status.COMPLETED
        result.state[S.n] shouldBe 30
        result.state[S.log] shouldBe listOf("10: yes", "20: still yes", "done")
        result.node("step").executions shouldBe 30
        result.node("ask").executions shouldBe 2
        temporal.executions("step") shouldBe 30
        temporal.executions("ask") shouldBe 4 // each asked, then answered
        executionsOf("ask-segments") shouldBeGreaterThanOrEqual 4
    }

    @Test
    fun `the threshold is checked`() {
        val error = assertThrows<IllegalArgumentException> { TemporalOptions(continueAsNewAfterEvents = 0) }
        error.message shouldBe "continueAsNewAfterEvents must be between 1 and 40000 (well below Temporal's limit " +
            "of 51,200 events per workflow execution), but was 0."
    }

    // Real time: the run waits for an answer in a workflow Update; the query is polled for a bounded while.
    private fun awaitPending(run: TemporalRun): Map<String, String> {
        val deadline = System.nanoTime() + 60_000_000_000L
        while (System.nanoTime() < deadline) {
            val asked = run.interrupts()
            if (asked.isNotEmpty()) return asked
            Thread.sleep(20)
        }
        error("Run ${run.runId} asked nothing within 60 s; progress: ${run.progress()}")
    }
}
