package dev.trellis.runtime

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** A node's error is the very exception it threw, also when it failed after suspending under a timeout. */
class NodeErrorIdentityTest {
    object S : StateSchema()

    @Test
    fun `a node with a timeout that fails after suspending keeps its own exception`(): Unit = runBlocking {
        val boom = IllegalStateException("boom")
        val g = graph("timed", S) {
            val n = node("n", timeout = 30.seconds) {
                delay(1.milliseconds)
                throw boom
            }
            start(n)
        }
        val e = assertThrows<GraphRunException> { g.invoke() }
        e.cause shouldBeSameInstanceAs boom
        e.result.node("n").error shouldBeSameInstanceAs boom
    }
}
