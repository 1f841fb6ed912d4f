package dev.trellis.runtime.guide

import app.cash.turbine.test
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.NodeTimeoutException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.time.Duration
import java.time.Instant
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

object Support : StateSchema("support") {
    val ticket = key("ticket", default = "")
    val category = key("category", default = "")
    val answer = key("answer", default = "")
}

/** The graph under test. Its slow dependency, the model, is a parameter: the test passes a fake. */
fun supportGraph(model: suspend (String) -> String) = graph("support", Support) {
    val classify = node("classify") {
        set(Support.category, if ("printer" in get(Support.ticket)) "hardware" else "other")
    }
    val answer = node("answer", timeout = 10.seconds, retry = Retry.fixed(maxAttempts = 3, delay = 1.seconds)) {
        set(Support.answer, model(get(Support.ticket)))
    }
    start(classify)
    classify then answer
}

class SupportGraphTest {
    private val ticket = stateOf(Support.ticket to "The printer is on fire")

    @Test
    fun `a model call that hangs times out, and the retry answers`() = runTest {
        var calls = 0
        val graph = supportGraph {
            calls++
            if (calls == 1) delay(5.minutes) // the first call hangs: the 10 s timeout cuts it short
            "Have you tried turning it off and on again?"
        }
        graph.events(ticket).test {
            awaitItem().shouldBeInstanceOf<RunEvent.RunStarted>()
            awaitItem().shouldBeInstanceOf<RunEvent.NodeStarted>().nodeId shouldBe "classify"
            awaitItem().shouldBeInstanceOf<RunEvent.NodeCompleted>().nodeId shouldBe "classify"
            awaitItem().shouldBeInstanceOf<RunEvent.EdgeTaken>().to shouldBe "answer"
            awaitItem().shouldBeInstanceOf<RunEvent.NodeStarted>().nodeId shouldBe "answer"
            val retrying = awaitItem().shouldBeInstanceOf<RunEvent.NodeRetrying>()
            retrying.error.shouldBeInstanceOf<NodeTimeoutException>()
            retrying.timestamp shouldBe Instant.ofEpochSecond(10) // virtual time: no test waits 10 s
            val answered = awaitItem().shouldBeInstanceOf<RunEvent.NodeCompleted>()
            answered.attempts shouldBe 2
            answered.timestamp shouldBe Instant.ofEpochSecond(11) // the timeout, then the 1 s retry delay
            val result = awaitItem().shouldBeInstanceOf<RunEvent.RunCompleted>().result
            result.state[Support.answer] shouldBe "Have you tried turning it off and on again?"
            result.duration shouldBe Duration.ofSeconds(11)
            awaitComplete()
        }
    }

    @Test
    fun `a ticket is classified and answered once`() = runTest {
        val result = supportGraph { "Noted." }.invoke(ticket)
        result.state[Support.category] shouldBe "hardware"
        result.node("answer").executions shouldBe 1
    }
}
