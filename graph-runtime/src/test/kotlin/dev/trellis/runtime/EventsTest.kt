@file:OptIn(ExperimentalCoroutinesApi::class)

package dev.trellis.runtime

import app.cash.turbine.test
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.collections.shouldBeIn
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.time.ZoneOffset
import java.util.concurrent.atomic.AtomicInteger

/** The event stream of `docs/semantics.md` §8. */
class EventsTest {
    object S : StateSchema("events") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val n = key("n", default = 0)
    }

    @Test
    fun `sequence numbers run from 0 without gaps under real parallelism`(): Unit = runBlocking {
        val g = graph("parallel-events", S) {
            val s = node("s") { }
            val j = node("j") { }
            start(s)
            for (k in 0 until 16) {
                val b = node("b$k") {
                    repeat(3) { emit("b$k-$it") }
                    set(S.log, listOf("b$k"))
                }
                s then b
                b then j
            }
        }
        repeat(20) {
            val run = g.record(options = RunOptions(dispatcher = Dispatchers.Default))
            run.events.map { it.sequence } shouldBe run.events.indices.map { it.toLong() }
            run.all<RunEvent.Custom>().size shouldBe 48
            run.all<RunEvent.NodeStarted>().size shouldBe 18
            run.all<RunEvent.EdgeTaken>().size shouldBe 32
        }
    }

    @Test
    fun `custom payloads come between their execution's start and end, in order`() = runTest {
        val g = graph("emits", S) {
            val a = node("a") {
                emit("a$executionCount-1")
                delay(5)
                emit("a$executionCount-2")
                update(S.n) { it + 1 }
            }
            start(a)
            a.route(a, END) { if (it[S.n] < 3) a else END }
        }
        val run = g.record(options = virtualTime())
        val customs = run.all<RunEvent.Custom>()
        customs.map { it.payload } shouldBe listOf("a1-1", "a1-2", "a2-1", "a2-2", "a3-1", "a3-2")
        for (custom in customs) {
            val at = run.events.indexOf(custom)
            val start = run.indexOf { it is RunEvent.NodeStarted && it.execution == custom.execution }
            val end = run.indexOf { it is RunEvent.NodeCompleted && it.execution == custom.execution }
            at shouldBeIn (start + 1 until end).toList()
            custom.nodeId shouldBe "a"
        }
        run.all<RunEvent.EdgeTaken>().last().to shouldBe Graph.END
    }

    @Test
    fun `a slow collector gets every event and holds the run back`() = runTest {
        val total = 1000
        val emitted = AtomicInteger()
        val g = graph("chatty", S) {
            val a = node("a") {
                repeat(total) {
                    emitted.incrementAndGet()
                    emit(it)
                }
            }
            start(a)
        }
        var received = 0
        var mostAhead = 0
        val events = ArrayList<RunEvent>()
        g.events(options = virtualTime()).collect { event ->
            events += event
            if (event is RunEvent.Custom) {
                received++
                mostAhead = maxOf(mostAhead, emitted.get() - received)
            }
            delay(1)
        }
        EventInvariants.check(events)
        received shouldBe total
        events.filterIsInstance<RunEvent.Custom>().map { it.payload } shouldBe (0 until total).toList()
        // The run waits for the collector: it is never ahead by more than the event buffer.
        mostAhead shouldBeLessThanOrEqual 70
    }

    @Test
    fun `a chain's events in order (Turbine)`() = runTest {
        val g = graph("turbine", S) {
            val a = node("a") { delay(3) }
            val b = node("b") { emit("hello") }
            start(a)
            a then b
        }
        g.events(options = virtualTime()).test {
            awaitItem().shouldBeInstanceOf<RunEvent.RunStarted>().graphId shouldBe "turbine"
            awaitItem().shouldBeInstanceOf<RunEvent.NodeStarted>().nodeId shouldBe "a"
            val completed = awaitItem().shouldBeInstanceOf<RunEvent.NodeCompleted>()
            completed.nodeId shouldBe "a"
            completed.duration shouldBe Duration.ofMillis(3)
            awaitItem().shouldBeInstanceOf<RunEvent.EdgeTaken>().to shouldBe "b"
            awaitItem().shouldBeInstanceOf<RunEvent.NodeStarted>().nodeId shouldBe "b"
            awaitItem().shouldBeInstanceOf<RunEvent.Custom>().payload shouldBe "hello"
            awaitItem().shouldBeInstanceOf<RunEvent.NodeCompleted>().nodeId shouldBe "b"
            awaitItem().shouldBeInstanceOf<RunEvent.RunCompleted>().result.duration shouldBe Duration.ofMillis(3)
            awaitComplete()
        }
    }

    @Test
    fun `each collection is a fresh, isolated run`() = runTest {
        val g = graph("fresh", S) {
            val a = node("a") {
                update(S.n) { it + 1 }
                set(S.log, listOf("a"))
            }
            start(a)
        }
        val flow = g.events(options = virtualTime())
        val first = flow.toList()
        val second = flow.toList()
        EventInvariants.check(first)
        EventInvariants.check(second)
        first[0].runId shouldNotBe second[0].runId
        for (events in listOf(first, second)) {
            val result = events.last().terminalResult
            result.state[S.n] shouldBe 1
            result.state[S.log] shouldBe listOf("a")
        }
    }

    @Test
    fun `a failed run ends the flow with RunFailed and does not throw`() = runTest {
        val g = graph("failing", S) {
            val a = node("a") { error("nope") }
            start(a)
        }
        val run = g.record(options = virtualTime())
        val failed = run.events.last().shouldBeInstanceOf<RunEvent.RunFailed>()
        failed.error.message shouldBe "nope"
        failed.result.status shouldBe Status.FAILED
        run.all<RunEvent.NodeFailed>().single().error shouldBe failed.error
    }

    @Test
    fun `timestamps come from the injected clock`() = runTest {
        val instant = Instant.parse("2030-01-02T03:04:05Z")
        val g = graph("clock", S) {
            val a = node("a") { emit("x") }
            start(a)
        }
        val base = virtualTime()
        val options = RunOptions(
            dispatcher = base.dispatcher,
            timeSource = base.timeSource,
            clock = Clock.fixed(instant, ZoneOffset.UTC),
            runId = "run-42",
        )
        val run = g.record(options = options)
        run.events.map { it.timestamp }.distinct() shouldBe listOf(instant)
        run.events.map { it.runId }.distinct() shouldBe listOf("run-42")
        run.result.runId shouldBe "run-42"
    }

    /** A clock that moves 1 ms forward at every reading: two readings never give the same instant. */
    private class TickingClock : Clock() {
        private var millis = 0L

        override fun instant(): Instant = Instant.ofEpochMilli(++millis)

        override fun getZone(): ZoneOffset = ZoneOffset.UTC

        override fun withZone(zone: java.time.ZoneId?): Clock = this
    }

    private fun chain() = graph("stamps", S) {
        val a = node("a") { }
        val b = node("b") { }
        val c = node("c") { delay(1_000) }
        val d = node("d") { }
        start(a)
        a then b
        b then c
        c then d
    }

    @Test
    fun `a node begun right after a completion shares its timestamp, with one reading of the clock`() = runTest {
        val base = virtualTime()
        val run = chain().record(
            options = RunOptions(dispatcher = base.dispatcher, timeSource = base.timeSource, clock = TickingClock()),
        )
        val completed = run.all<RunEvent.NodeCompleted>().associate { it.nodeId to it.timestamp }
        val started = run.all<RunEvent.NodeStarted>().associate { it.nodeId to it.timestamp }
        // In virtual time no time passes between a completion and the begin of the node it made ready.
        started.getValue("b") shouldBe completed.getValue("a")
        started.getValue("c") shouldBe completed.getValue("b")
        started.getValue("d") shouldBe completed.getValue("c")
        // Every other event read the ticking clock itself: no two of them share an instant.
        val others =
            run.events.filter { it !is RunEvent.EdgeTaken && (it !is RunEvent.NodeStarted || it.nodeId == "a") }
        others.map { it.timestamp }.distinct().size shouldBe others.size
    }

    @Test
    fun `a node begun after a wait reads the clock anew`() = runTest {
        val base = virtualTime()
        val inner = dev.trellis.checkpoint.InMemoryCheckpointStore()
        // Each checkpoint write takes a virtual second: the driver begins the next node a second after the completion.
        val slow = object : dev.trellis.checkpoint.CheckpointStore by inner {
            override suspend fun append(
                lease: dev.trellis.checkpoint.Lease,
                record: dev.trellis.checkpoint.CheckpointRecord,
            ) {
                delay(1_000)
                inner.append(lease, record)
            }
        }
        val run = chain().record(
            options = RunOptions(
                dispatcher = base.dispatcher,
                timeSource = base.timeSource,
                clock = TickingClock(),
                checkpointing = Checkpointing(slow),
            ),
        )
        val completed = run.all<RunEvent.NodeCompleted>().associate { it.nodeId to it.timestamp }
        val started = run.all<RunEvent.NodeStarted>().associate { it.nodeId to it.timestamp }
        for ((before, next) in listOf("a" to "b", "b" to "c", "c" to "d")) {
            started.getValue(next) shouldNotBe completed.getValue(before)
            (started.getValue(next) > completed.getValue(before)) shouldBe true
        }
    }
}
