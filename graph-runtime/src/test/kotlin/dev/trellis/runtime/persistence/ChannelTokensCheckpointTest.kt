package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
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
import java.time.Instant

/** Tokens waiting on a channel survive a checkpoint: each one still becomes an execution after resume. */
class ChannelTokensCheckpointTest {
    object Plans : StateSchema("plans") {
        val plans = key("plans", default = 0)
    }

    // plan loops three times quickly while notify's first execution is slow and then asks for input: two tokens from
    // plan wait on notify's channel when the run pauses.
    private val graph = graph("plan-notify", Plans) {
        val p = node("plan") {
            delay(1)
            update(Plans.plans) { it + 1 }
        }
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
        val options = virtualTime().let {
            RunOptions(
                runId = "tokens",
                checkpointing = Checkpointing(store),
                dispatcher = it.dispatcher,
                timeSource = it.timeSource,
            )
        }
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

    @Test
    fun `a checkpoint of the first format, one trigger per node without its source, still resumes`() = runTest {
        val store = InMemoryCheckpointStore()
        val options = virtualTime().let {
            RunOptions(
                runId = "first-format",
                checkpointing = Checkpointing(store),
                dispatcher = it.dispatcher,
                timeSource = it.timeSource,
            )
        }
        graph.invoke(options = options).status shouldBe Status.INTERRUPTED
        val latest = store.latest("first-format")!!
        // What the first format wrote: a stamp per triggered node and the next stamp, no channel and no count.
        val firstFormat = latest.payload
            .replace(
                "\"triggers\":[{\"node\":\"notify\",\"stamp\":0,\"from\":\"plan\",\"tokens\":2}]",
                "\"triggers\":[{\"node\":\"notify\",\"stamp\":4}],\"nextStamp\":5",
            )
        (firstFormat != latest.payload) shouldBe true
        val lease = store.claim("first-format", "first-format-writer")
        store.append(
            lease,
            CheckpointRecord(
                "first-format",
                latest.sequence + 1,
                latest.sequence,
                graph.id,
                1,
                Instant.now(),
                "INTERRUPTED",
                CheckpointRecord.Kind.FULL,
                firstFormat,
            ),
        )
        store.release(lease)

        val done = graph.resume("first-format", options, answer = "yes")
        done.status shouldBe Status.COMPLETED
        // The interrupted execution re-runs, and the one stored trigger is one more execution.
        done.node("notify").executions shouldBe 2
    }
}
