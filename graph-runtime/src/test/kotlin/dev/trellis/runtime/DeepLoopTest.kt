package dev.trellis.runtime

import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.util.concurrent.TimeUnit

/** Long loops run in constant stack and bounded memory. */
class DeepLoopTest {
    object S : StateSchema("deep") {
        val n = key("n", default = 0)
    }

    private fun loop(iterations: Int) = graph("deep", S) {
        val inc = node("inc") { update(S.n) { it + 1 } }
        start(inc)
        inc.route(inc, END) { if (it[S.n] < iterations) inc else END }
        config { maxNodeExecutions = iterations }
    }

    @Test
    @Timeout(60, unit = TimeUnit.SECONDS)
    fun `a million iterations complete with bounded history`(): Unit = runBlocking {
        val iterations = 1_000_000
        val result = loop(iterations).invoke(options = RunOptions(executionHistoryLimit = 1000))
        result.status shouldBe Status.COMPLETED
        result.state[S.n] shouldBe iterations
        result.node("inc").executions shouldBe iterations
        result.executions.size shouldBe 1000
        result.droppedExecutions shouldBe (iterations - 1000).toLong()
        result.executions.first().execution shouldBe iterations - 999
        result.executions.last().execution shouldBe iterations
    }

    @Test
    @Timeout(60, unit = TimeUnit.SECONDS)
    fun `a long loop on a thread pool completes`(): Unit = runBlocking {
        val iterations = 100_000
        val result = loop(
            iterations,
        ).invoke(options = RunOptions(dispatcher = Dispatchers.Default, executionHistoryLimit = 0))
        result.state[S.n] shouldBe iterations
        result.executions shouldBe emptyList()
        result.droppedExecutions shouldBe iterations.toLong()
    }
}
