package dev.trellis.runtime

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test

class LargeGraphTest {
    object S : StateSchema() {
        val n = key("n", default = 0)
    }

    @Test
    fun `a chain longer than the shared edge-target table runs to the end`(): Unit = runBlocking {
        val length = 1500
        val chain = graph("long-chain", S) {
            val nodes = (0 until length).map { i -> node("c$i") { update(S.n) { it + 1 } } }
            start(nodes[0])
            for (i in 1 until length) nodes[i - 1] then nodes[i]
            config { maxNodeExecutions = length }
        }
        val result = chain.invoke()
        result.status shouldBe Status.COMPLETED
        result.state[S.n] shouldBe length
        result.node("c${length - 1}").executions shouldBe 1
    }
}
