package dev.trellis.runtime

import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test

class SmokeTest {
    object S : StateSchema() {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val n = key("n", default = 0)
    }

    private val diamond = graph("diamond", S) {
        val s = node("s") { set(S.log, listOf("s")) }
        val a = node("a") { set(S.log, listOf("a")) }
        val b = node("b") { set(S.log, listOf("b")) }
        val j = node("j") { set(S.log, listOf("j")) }
        start(s)
        s then a
        s then b
        a then j
        b then j
    }

    @Test
    fun `diamond runs join once`(): Unit = runBlocking {
        val result = diamond.invoke()
        result.status shouldBe Status.COMPLETED
        result.state[S.log].first() shouldBe "s"
        result.state[S.log].last() shouldBe "j"
        result.state[S.log].size shouldBe 4
        result.node("j").executions shouldBe 1
    }

    @Test
    fun `events are paired`(): Unit = runBlocking {
        val events = diamond.events().toList()
        events.first() shouldBe events.filterIsInstance<RunEvent.RunStarted>().single()
        (events.last() is RunEvent.RunCompleted) shouldBe true
        events.map { it.sequence } shouldBe events.indices.map { it.toLong() }
        events.filterIsInstance<RunEvent.NodeStarted>().size shouldBe 4
        events.filterIsInstance<RunEvent.NodeCompleted>().size shouldBe 4
    }

    @Test
    fun `loop counts`(): Unit = runBlocking {
        val loop = graph("loop", S) {
            val inc = node("inc") { update(S.n) { it + 1 } }
            start(inc)
            inc.route(inc, END) { if (it[S.n] < 1000) inc else END }
            config { maxNodeExecutions = 2000 }
        }
        val result = loop.invoke(stateOf(S.n to 0))
        result.state[S.n] shouldBe 1000
    }
}
