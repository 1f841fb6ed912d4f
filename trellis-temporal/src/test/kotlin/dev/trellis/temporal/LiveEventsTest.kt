package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import io.kotest.matchers.collections.shouldContainInOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.flow.transformWhile
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.time.Duration.Companion.seconds

/**
 * A run's events reach the caller live through the side channel (docs/temporal.md, "Events"): the scheduler's from
 * the workflow, a node's payloads from its activity while it runs, each once although published at least once.
 */
class LiveEventsTest {
    object S : StateSchema("live") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val release = CompletableDeferred<Unit>()

    private val streaming: Graph = graph("streaming", S) {
        val a = node("a") { set(S.log, listOf("a")) }
        val talk = node("talk") {
            emit("tok-1")
            emit("tok-2")
            release.await() // the first tokens reach the caller while the node still runs
            emit("tok-3")
            set(S.log, listOf("talked"))
        }
        start(a)
        a then talk
    }

    private val live = InMemoryLiveEvents()
    private val temporal = TemporalHarness(listOf(streaming), TemporalOptions(liveEvents = live))

    @AfterEach
    fun tearDown() {
        release.complete(Unit)
        temporal.close()
    }

    @Test
    fun `events stream live from the workflow and the activities, each once`(): Unit = runBlocking {
        val run = temporal.runner.start(streaming, runId = "live-1")
        val seen = ArrayList<RunEvent>()
        withTimeout(120.seconds) {
            run.events().collect { event ->
                seen += event
                // Only a live payload can release the node: the workflow publishes payloads when the activity ends.
                if (event is RunEvent.Custom && event.payload == "tok-2") release.complete(Unit)
            }
        }

        seen.first().shouldBeInstanceOf<RunEvent.RunStarted>()
        seen.last().shouldBeInstanceOf<RunEvent.RunCompleted>()
        seen.filterIsInstance<RunEvent.Custom>().map { it.payload } shouldBe listOf("tok-1", "tok-2", "tok-3")
        seen.map { it.javaClass.simpleName + ":" + ((it as? RunEvent.NodeEvent)?.path ?: "") }.shouldContainInOrder(
            "RunStarted:",
            "NodeStarted:a",
            "NodeCompleted:a",
            "NodeStarted:talk",
            "Custom:talk",
            "Custom:talk",
            "Custom:talk",
            "NodeCompleted:talk",
            "RunCompleted:",
        )
        // The scheduler's events keep the workflow's numbering.
        val numbered = seen.filter { it.sequence >= 0 }.map { it.sequence }
        numbered shouldBe numbered.sorted()
        run.awaitBlocking().status shouldBe Status.COMPLETED
    }

    @Test
    fun `the side channel repeats payloads, the run's stream does not`(): Unit = runBlocking {
        release.complete(Unit)
        val run = temporal.runner.start(streaming, runId = "live-repeats")
        run.awaitBlocking().status shouldBe Status.COMPLETED

        val published = withTimeout(60.seconds) {
            live.subscribe("live-repeats", streaming).transformWhile {
                emit(it)
                !it.event.isTerminal
            }.toList()
        }
        val payloads = published.map { it.event }.filterIsInstance<RunEvent.Custom>().map { it.payload.toString() }
        // Live from the activity, again from the workflow when the activity completed (and on any replay).
        payloads.groupingBy { it }.eachCount().mapValues { it.value >= 2 } shouldBe
            mapOf("tok-1" to true, "tok-2" to true, "tok-3" to true)
        val distinct = published.map { it.key }.toSet().size

        // A late subscriber gets the whole run, each event once.
        val streamed = withTimeout(60.seconds) { run.events().toList() }
        streamed.filterIsInstance<RunEvent.Custom>().map { it.payload.toString() } shouldBe
            listOf("tok-1", "tok-2", "tok-3")
        streamed.size shouldBe distinct
    }

    @Test
    fun `a runner without a side channel says how to stream`() {
        release.complete(Unit)
        val runner = TemporalRunner(temporal.env.workflowClient, TemporalHarness.QUEUE)
        val run = runner.start(streaming, runId = "live-none")
        val error = assertThrows<IllegalStateException> { run.events() }
        error.message shouldBe "Run 'live-none' cannot stream its events: give the runner the LiveEvents its " +
            "workers publish on (TemporalRunner(client, taskQueue, liveEvents)) and the workers " +
            "TemporalOptions(liveEvents = ...)."
        run.awaitBlocking().status shouldBe Status.COMPLETED
    }
}
