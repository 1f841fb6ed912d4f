@file:OptIn(ExperimentalCoroutinesApi::class)

package dev.trellis.runtime

import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.io.IOException
import java.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** Retries, timeouts and limits of `docs/semantics.md` §7, in virtual time. */
class RetryTimeoutTest {
    object S : StateSchema("retry") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val n = key("n", default = 0)
    }

    class Flaky(attempt: Int) : IOException("attempt $attempt failed")

    /** Runs a node that fails its first [failures] attempts under [retry]; returns the run and the elapsed virtual time. */
    private suspend fun kotlinx.coroutines.test.TestScope.flaky(retry: Retry, failures: Int): Pair<RecordedRun, Long> {
        val seenAttempts = ArrayList<Int>()
        val g = graph("flaky", S) {
            val a = node("a", retry = retry) {
                seenAttempts += attempt
                executionCount shouldBe 1
                set(S.log, listOf("attempt $attempt"))
                if (attempt <= failures) throw Flaky(attempt)
            }
            start(a)
        }
        val before = currentTime
        val run = g.record(options = virtualTime())
        seenAttempts shouldBe (1..minOf(failures + 1, retry.maxAttempts)).toList()
        return run to currentTime - before
    }

    private fun RecordedRun.retryDelays(): List<Long> = all<RunEvent.NodeRetrying>().map { it.delay.toMillis() }

    @Test
    fun `fixed retries then success`() = runTest {
        val (run, elapsed) = flaky(Retry.fixed(4, 100.milliseconds), failures = 2)
        run.result.status shouldBe Status.COMPLETED
        run.result.node("a").attempts shouldBe 3
        run.result.node("a").executions shouldBe 1
        run.all<RunEvent.NodeCompleted>().single().attempts shouldBe 3
        run.all<RunEvent.NodeRetrying>().map { it.attempt } shouldBe listOf(1, 2)
        run.all<RunEvent.NodeRetrying>().forEach { it.error.shouldBeInstanceOf<Flaky>() }
        run.retryDelays() shouldBe listOf(100L, 100L)
        elapsed shouldBe 200
        run.result.state[S.log] shouldBe listOf("attempt 3")
    }

    @Test
    fun `linear backoff waits initialDelay times n`() = runTest {
        val (run, elapsed) = flaky(Retry.linear(4, 100.milliseconds), failures = 3)
        run.result.status shouldBe Status.COMPLETED
        run.retryDelays() shouldBe listOf(100L, 200L, 300L)
        elapsed shouldBe 600
    }

    @Test
    fun `exponential backoff grows by the multiplier up to maxDelay`() = runTest {
        val (run, elapsed) = flaky(
            Retry.exponential(5, 100.milliseconds, 2.0, maxDelay = 300.milliseconds),
            failures = 4,
        )
        run.result.status shouldBe Status.COMPLETED
        run.retryDelays() shouldBe listOf(100L, 200L, 300L, 300L)
        elapsed shouldBe 900
        run.result.node("a").attempts shouldBe 5
    }

    @Test
    fun `retries exhausted fail the node with the last attempt's error`() = runTest {
        val (run, elapsed) = flaky(Retry.fixed(3, 10.milliseconds), failures = 99)
        run.result.status shouldBe Status.FAILED
        run.result.node("a").status shouldBe Status.FAILED
        run.result.node("a").attempts shouldBe 3
        run.result.error!!.message shouldBe "attempt 3 failed"
        run.all<RunEvent.NodeFailed>().single().attempts shouldBe 3
        run.retryDelays() shouldBe listOf(10L, 10L)
        elapsed shouldBe 20
        run.result.state[S.log] shouldBe emptyList()
    }

    @Test
    fun `retryOn stops retrying errors it rejects`() = runTest {
        val g = graph("retry-on", S) {
            val a = node("a", retry = Retry.fixed(5, 10.milliseconds).retryOn { it is IOException }) {
                if (attempt == 1) throw IOException("transient")
                error("permanent at attempt $attempt")
            }
            start(a)
        }
        val e = shouldThrow<GraphRunException> { g.invoke(options = virtualTime()) }
        e.cause.shouldBeInstanceOf<IllegalStateException>().message shouldBe "permanent at attempt 2"
        e.result.node("a").attempts shouldBe 2
    }

    @Test
    fun `the graph's default retry applies to nodes without their own`() = runTest {
        val g = graph("default-retry", S) {
            val a = node("a") { if (attempt < 3) error("again") }
            start(a)
            config { defaultRetry = Retry.fixed(3, 7.milliseconds) }
        }
        g.invoke(options = virtualTime()).node("a").attempts shouldBe 3
        currentTime shouldBe 14
    }

    @Test
    fun `a node running past its timeout fails with NodeTimeoutException`() = runTest {
        val g = graph("timeout", S) {
            val a = node("a", timeout = 50.milliseconds) {
                delay(100)
                set(S.log, listOf("late"))
            }
            val b = node("b") { }
            start(a)
            a then b
        }
        val e = shouldThrow<GraphRunException> { g.invoke(options = virtualTime()) }
        val timeout = e.cause.shouldBeInstanceOf<NodeTimeoutException>()
        timeout.nodeId shouldBe "a"
        timeout.timeout shouldBe Duration.ofMillis(50)
        e.result.node("a").status shouldBe Status.FAILED
        e.result.node("b").status shouldBe Status.PENDING
        e.result.state[S.log] shouldBe emptyList()
        currentTime shouldBe 50
    }

    @Test
    fun `a timed-out attempt is retried when the policy says so`() = runTest {
        val g = graph("timeout-retry", S) {
            val a = node("a", timeout = 50.milliseconds, retry = Retry.fixed(3, 10.milliseconds)) {
                if (attempt < 3) delay(100)
                set(S.log, listOf("attempt $attempt"))
            }
            start(a)
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.all<RunEvent.NodeRetrying>().forEach { it.error.shouldBeInstanceOf<NodeTimeoutException>() }
        run.result.node("a").attempts shouldBe 3
        run.result.state[S.log] shouldBe listOf("attempt 3")
        currentTime shouldBe 120
    }

    @Test
    fun `the graph's default node timeout applies`() = runTest {
        val g = graph("default-timeout", S) {
            val a = node("a") { delay(1.seconds) }
            start(a)
            config { defaultNodeTimeout = 200.milliseconds }
        }
        shouldThrow<GraphRunException> {
            g.invoke(
                options = virtualTime(),
            )
        }.cause.shouldBeInstanceOf<NodeTimeoutException>()
        currentTime shouldBe 200
    }

    @Test
    fun `a run past its executionTimeout cancels running nodes and fails`() = runTest {
        val g = graph("run-timeout", S) {
            val s = node("s") { delay(100) }
            val a = node("a") {
                delay(10.seconds)
                set(S.log, listOf("a"))
            }
            val b = node("b") {
                delay(20.seconds)
                set(S.log, listOf("b"))
            }
            val c = node("c") { }
            start(s)
            s then a
            s then b
            a then c
            config { executionTimeout = 1.seconds }
        }
        val run = g.record(options = virtualTime())
        currentTime shouldBe 1000
        run.result.status shouldBe Status.FAILED
        val timeout = run.result.error.shouldBeInstanceOf<RunTimeoutException>()
        timeout.timeout shouldBe Duration.ofSeconds(1)
        timeout.message shouldContain "executionTimeout"
        run.result.node("a").status shouldBe Status.CANCELLED
        run.result.node("b").status shouldBe Status.CANCELLED
        run.result.node("c").status shouldBe Status.PENDING
        run.all<RunEvent.NodeCancelled>().map { it.nodeId } shouldContainExactlyInAnyOrder listOf("a", "b")
        run.events.last().shouldBeInstanceOf<RunEvent.RunFailed>()
        run.result.state[S.log] shouldBe emptyList()

        shouldThrow<GraphRunException> {
            g.invoke(
                options = virtualTime(),
            )
        }.cause.shouldBeInstanceOf<RunTimeoutException>()
    }

    @Test
    fun `maxNodeExecutions stops a runaway loop and names the limit`() = runTest {
        val g = graph("runaway", S) {
            val a = node("a") { update(S.n) { it + 1 } }
            start(a)
            a.route(a, END) { a }
            config { maxNodeExecutions = 10 }
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.FAILED
        val limit = run.result.error.shouldBeInstanceOf<LimitExceededException>()
        limit.limit shouldBe "maxNodeExecutions"
        limit.value shouldBe 10
        limit.message shouldContain "maxNodeExecutions = 10"
        run.result.node("a").executions shouldBe 10
        run.result.state[S.n] shouldBe 10
        run.all<RunEvent.NodeStarted>().size shouldBe 10
        val e = shouldThrow<GraphRunException> { g.invoke(options = virtualTime()) }
        e.cause.shouldBeInstanceOf<LimitExceededException>()
    }

    @Test
    fun `maxConcurrency is never exceeded`() = runTest {
        var running = 0
        var most = 0
        val order = ArrayList<String>()
        val g = graph("concurrency", S) {
            val s = node("s") { }
            start(s)
            for (k in 0 until 10) {
                val branch = node("b$k") {
                    running++
                    most = maxOf(most, running)
                    order += "b$k"
                    delay(1L + (k * 7) % 5)
                    running--
                }
                s then branch
            }
            config { maxConcurrency = 2 }
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        most shouldBe 2
        // Ready nodes start in the order they became ready.
        order shouldBe (0 until 10).map { "b$it" }
    }

    @Test
    fun `a node waiting to retry blocks its join`() = runTest {
        val starts = HashMap<String, Long>()
        val g = graph("retry-join", S) {
            val s = node("s") { }
            val a = node("a", retry = Retry.fixed(2, 50.milliseconds)) {
                delay(1)
                check(attempt == 2) { "once more" }
            }
            val b = node("b") { delay(2) }
            val j = node("j") { starts["j"] = currentTime }
            start(s)
            s then a
            s then b
            a then j
            b then j
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.node("j").executions shouldBe 1
        starts["j"] shouldBe 52
    }

    @Test
    fun `a run cancelled while a node waits to retry ends CANCELLED without another attempt`() = runTest {
        val attempts = ArrayList<Int>()
        val g = graph("retry-cancel", S) {
            val a = node("a", retry = Retry.fixed(3, 1.seconds)) {
                attempts += attempt
                error("fails")
            }
            start(a)
        }
        val events = ArrayList<RunEvent>()
        val handle = g.start(this, options = virtualTime()) { events += it }
        while (events.none { it is RunEvent.NodeRetrying }) delay(1)
        handle.cancel()
        val result = handle.await()
        result.status shouldBe Status.CANCELLED
        result.node("a").status shouldBe Status.CANCELLED
        attempts shouldBe listOf(1)
        EventInvariants.check(events)
        events.last().shouldBeInstanceOf<RunEvent.RunCancelled>()
    }

    @Test
    fun `executionTimeout cancels a node the loop runs inline`() = runTest {
        val g = graph("inline-timeout", S) {
            val a = node("a") {
                delay(10.seconds)
                set(S.log, listOf("a"))
            }
            start(a)
            config { executionTimeout = 1.seconds }
        }
        val run = g.record(options = virtualTime())
        run.result.error.shouldBeInstanceOf<RunTimeoutException>()
        run.result.node("a").status shouldBe Status.CANCELLED
        run.all<RunEvent.NodeCancelled>().single().nodeId shouldBe "a"
        run.result.state[S.log] shouldBe emptyList()
        currentTime shouldBe 1000
    }

    @Test
    fun `a CancellationException thrown by the body itself is a failure, retried like any other`() = runTest {
        val g = graph("own-cancellation", S) {
            val a = node("a", retry = Retry.fixed(2, 1.milliseconds)) {
                if (attempt == 1) throw kotlinx.coroutines.CancellationException("not the run's")
            }
            start(a)
        }
        val run = g.record(options = virtualTime())
        run.result.status shouldBe Status.COMPLETED
        run.result.node("a").attempts shouldBe 2
        run.all<RunEvent.NodeRetrying>().single().error.message shouldBe "not the run's"
    }
}
