package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.virtualTime
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test

/** Tokens waiting on a channel survive a checkpoint: each one still becomes an execution after resume. */
class ChannelTokensCheckpointTest {
    object Plans : StateSchema("plans") {
        val plans = key("plans", default = 0)
    }

    // plan loops three times quickly while notify's first execution is slow and then asks for input: two tokens from
    // plan wait on notify's channel when the run pauses.
    private val graph = graph("plan-notify", Plans) {
        val p = node("plan") { delay(1); update(Plans.plans) { it + 1 } }
        val n = node("notify") {
            delay(20)
            if (executionCount == 1) interrupt("notify?")
        }
        val a = node("act") { delay(1) }
        start(p)
        p then n
        p.then(a) { it[Plans.plans] < 3 }
        a then p
    }

    @Test
    fun `tokens waiting when a run pauses become one execution each after resume`() = runTest {
        val store = InMemoryCheckpointStore()
        val options = virtualTime().let { RunOptions(runId = "tokens", checkpointing = Checkpointing(store), dispatcher = it.dispatcher, timeSource = it.timeSource) }
        val paused = graph.invoke(options = options)
        paused.status shouldBe Status.INTERRUPTED
        paused.node("plan").executions shouldBe 3

        val latest = store.latest("tokens")!!
        latest.payload shouldContain "\"from\":\"plan\",\"tokens\":2"

        val done = graph.resume("tokens", options, answer = "yes")
        done.status shouldBe Status.COMPLETED
        done.node("notify").executions shouldBe 3
        done.node("plan").executions shouldBe 3
    }
}
