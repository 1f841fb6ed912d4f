package dev.trellis.runtime

import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import kotlin.time.Duration.Companion.milliseconds

/**
 * A run's per-node results (status, executions, attempts, time, last error) do not depend on how much of its history
 * it keeps: executions dropped from the history, also while they still run, still count.
 */
class HistoryLimitTest {
    object S : StateSchema("history-limit") {
        val round = key("round", default = 0, reducer = Reducer.sum())
        val hits = key("hits", default = 0, reducer = Reducer.sum())
    }

    /**
     * A loop of four rounds: `head` fans out to a slow branch and a flaky one (its first attempt of every round fails,
     * and the retry succeeds), both join in `tail`, which loops back; `head` begins the next round while nothing else
     * runs, `slow` is still running when executions begun after it push it out of a short history.
     */
    private val g = graph("history-limit", S) {
        var flakyAttempts = 0
        val head = node("head") {
            delay(1)
            set(S.round, 1)
        }
        val slow = node("slow") {
            delay(7)
            set(S.hits, 1)
        }
        val flaky = node("flaky", retry = Retry.fixed(2, 1.milliseconds)) {
            delay(2)
            flakyAttempts++
            if (flakyAttempts % 2 == 1) error("flaky attempt $flakyAttempts")
            set(S.hits, 1)
        }
        val tail = node("tail") { delay(3) }
        start(head)
        head then slow
        head then flaky
        slow then tail
        flaky then tail
        tail.route(head, END) { if (it[S.round] < 4) head else END }
    }

    private fun RunResult.summary(): Map<String, List<Any?>> = nodes.mapValues { (_, r) ->
        listOf(r.status, r.executions, r.attempts, r.duration, r.error?.message)
    }

    @Test
    fun `node results are the same whatever the history limit`() = runTest {
        val full = g.invoke(options = virtualTime(executionHistoryLimit = 10_000))
        full.status shouldBe Status.COMPLETED
        full.droppedExecutions shouldBe 0L
        full.node("flaky").attempts shouldBe 8
        full.node("flaky").error?.message shouldBe null
        full.node("slow").duration shouldBe java.time.Duration.ofMillis(28)
        full.node("flaky").duration shouldBe java.time.Duration.ofMillis(4 * (2 + 1 + 2))
        for (limit in listOf(0, 1, 2, 3, 5, 15)) {
            val kept = g.invoke(options = virtualTime(executionHistoryLimit = limit))
            kept.executions.size shouldBe minOf(limit, 16)
            kept.droppedExecutions shouldBe (16 - minOf(limit, 16)).toLong()
            kept.summary() shouldBe full.summary()
        }
    }

    @Test
    fun `a failed node's last error is kept when its execution left the history`() = runTest {
        val failing = graph("failing-early", S) {
            val bad = node("bad") { error("bad input") }
            val long = node("long") { delay(5) }
            val fill = node("fill") { delay(1) }
            start(bad)
            start(long)
            start(fill)
        }
        val result = failing.record(options = virtualTime(executionHistoryLimit = 1)).result
        result.status shouldBe Status.FAILED
        result.node("bad").status shouldBe Status.FAILED
        result.node("bad").error?.message shouldBe "bad input"
        result.node("long").status shouldBe Status.COMPLETED
        result.node("fill").status shouldBe Status.COMPLETED
        result.executions.map { it.nodeId } shouldBe listOf("fill")
    }
}
