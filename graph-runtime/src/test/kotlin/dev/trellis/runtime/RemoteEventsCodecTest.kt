package dev.trellis.runtime

import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.time.Duration.Companion.milliseconds

/**
 * `RemoteEvents.encode` and `decode` (`docs/temporal.md`, "Live events across JVMs"): every event of a run, written as
 * JSON text and read back with the graph's keys, is the event it was — same kind, fields, states and result — but
 * for what the rule changes: a payload becomes its `toString()`, an exception is rebuilt from its type and message.
 */
@OptIn(InternalTrellisApi::class)
class RemoteEventsCodecTest {
    data class Point(val x: Int, val y: Int)

    object S : StateSchema("codec") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val count = key("count", default = 0)
    }

    private var failures = 0

    private val chain = graph("codec", S) {
        val a = node("a") {
            emit("tok-1")
            emit(Point(1, 2))
            charge("usd", 0.25)
            set(S.log, listOf("a"))
        }
        val b = node("b", retry = Retry.fixed(2, 1.milliseconds)) {
            if (failures++ == 0) throw IllegalStateException("flaky")
            set(S.count, 7)
        }
        val c = node("c") { throw IllegalArgumentException("broken") }
        start(a)
        a then b
        b then c
    }

    /** Rebuilds the two exception types the graph throws as themselves, any other as a RuntimeException. */
    private val errorOf: (String, String) -> Throwable = { type, message ->
        when (type) {
            IllegalStateException::class.java.name -> IllegalStateException(message)
            IllegalArgumentException::class.java.name -> IllegalArgumentException(message)
            else -> RuntimeException("$type: $message")
        }
    }

    @Test
    fun `every event of a run reads back as it was, in another schema instance's hands`() = runTest {
        val events = chain.events(S.initialState().with(S.count, 1)).toList()
        val back = events.map { event ->
            val text = RemoteEvents.encode(event).toString()
            RemoteEvents.decode(Json.parseToJsonElement(text) as JsonObject, S, errorOf)
        }

        back.map { it.javaClass } shouldBe events.map { it.javaClass }
        back.map { it.toString() } shouldBe events.map { it.toString() }
        back.map { it.timestamp } shouldBe events.map { it.timestamp }
        back.map { it.runId } shouldBe events.map { it.runId }
        for ((original, copy) in events.zip(back)) {
            if (original is RunEvent.NodeEvent) {
                copy as RunEvent.NodeEvent
                listOf(copy.nodeId, copy.path, copy.execution, copy.task) shouldBe
                    listOf(original.nodeId, original.path, original.execution, original.task)
            }
        }
        // Payloads arrive as their toString().
        back.filterIsInstance<RunEvent.Custom>().map { it.payload } shouldBe listOf("tok-1", "Point(x=1, y=2)")
        (back.first() as RunEvent.RunStarted).input shouldBe (events.first() as RunEvent.RunStarted).input
        val retrying = back.filterIsInstance<RunEvent.NodeRetrying>().single()
        retrying.error.shouldBeInstanceOf<IllegalStateException>().message shouldBe "flaky"
        retrying.delay shouldBe (events.filterIsInstance<RunEvent.NodeRetrying>().single()).delay
        back.filterIsInstance<RunEvent.MetersCharged>().single().charges shouldBe mapOf("usd" to 0.25)

        val original = events.last() as RunEvent.RunFailed
        val failed = back.last().shouldBeInstanceOf<RunEvent.RunFailed>()
        failed.error.shouldBeInstanceOf<IllegalArgumentException>().message shouldBe "broken"
        failed.result.status shouldBe Status.FAILED
        failed.result.state shouldBe original.result.state
        failed.result.state[S.count] shouldBe 7
        failed.result.nodes.values.map { it.toString() } shouldBe original.result.nodes.values.map { it.toString() }
        failed.result.duration shouldBe original.result.duration
        failed.result.errors.map { it.message } shouldBe listOf("broken")
        failed.result.meters shouldBe mapOf("usd" to 0.25)
        failed.result.executions shouldBe emptyList()
    }

    @Test
    fun `a state key the reader's schema lacks is refused, naming it`() = runTest {
        val started = chain.events().toList().first()
        val other = object : StateSchema("other") {
            val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        }
        val error = assertThrows<IllegalArgumentException> {
            RemoteEvents.decode(RemoteEvents.encode(started), other) { _, m -> RuntimeException(m) }
        }
        error.message shouldBe "The encoded run event holds state key 'count', which schema 'other' does not have: " +
            "decode it with the graph (and version) of the run that made it."
    }
}
