package dev.trellis.runtime

import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.runInterruptible
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReference
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * Node timeouts (`docs/semantics.md` §7) of bodies that never suspend or block their thread: the attempt fails at its
 * deadline whatever the body does, the body's late writes and events are discarded, and the run moves on. Real
 * threads: a body that ignores cancellation is what this is about. The bodies wait for latches the test releases
 * once the run has returned, so each test shows the run ended while the body was still running.
 */
class NodeDeadlineTest {
    object S : StateSchema("deadline") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /**
     * A body that ignores cancellation: it spins (CPU) or blocks (a latch) until released. A watchdog releases it
     * after 10 s, so that a run that waits for its body fails the test instead of hanging it.
     */
    private class Stuck {
        val release = CountDownLatch(1)
        val ended = CountDownLatch(1)
        val emitFailure = AtomicReference<Throwable?>()

        init {
            Thread({ if (!release.await(10, TimeUnit.SECONDS)) release.countDown() }, "deadline-test-watchdog")
                .apply { isDaemon = true }
                .start()
        }

        /** Checked as soon as the run returned: the run did not wait for the body. */
        fun stillRunning() = withClue("the run ended while the abandoned body was still running") {
            ended.count shouldBe
                1L
        }

        fun awaitEnd() = withClue("the abandoned body ends once released") {
            ended.await(20, TimeUnit.SECONDS) shouldBe
                true
        }
    }

    private suspend fun <T> bounded(block: suspend () -> T): T = withTimeout(20.seconds) { block() }

    @Test
    fun `a CPU-bound body that never suspends fails at its deadline and its late writes are discarded`(): Unit = runBlocking {
        val stuck = Stuck()
        val g = graph("spin", S) {
            val a = node("a", timeout = 100.milliseconds) {
                while (stuck.release.count > 0) Thread.onSpinWait()
                set(S.log, listOf("late"))
                stuck.ended.countDown()
            }
            val b = node("b") { set(S.log, listOf("b")) }
            start(a)
            a then b
        }
        try {
            val e = bounded { shouldThrow<GraphRunException> { g.invoke() } }
            val timeout = e.cause.shouldBeInstanceOf<NodeTimeoutException>()
            timeout.nodeId shouldBe "a"
            stuck.stillRunning()
            e.result.node("a").status shouldBe Status.FAILED
            e.result.node("b").status shouldBe Status.PENDING
            e.result.state[S.log] shouldBe emptyList()
        } finally {
            stuck.release.countDown()
        }
        stuck.awaitEnd()
    }

    @Test
    fun `a timed-out attempt that ignores cancellation is retried at once, and the run goes on without it`(): Unit = runBlocking {
        val stuck = Stuck()
        val g = graph("retry-stuck", S) {
            val a = node("a", timeout = 100.milliseconds, retry = Retry.fixed(2, 1.milliseconds)) {
                if (attempt == 1) {
                    stuck.release.await() // a blocking wait that coroutine cancellation does not interrupt
                    set(S.log, listOf("attempt 1"))
                    try {
                        emit("late event")
                    } catch (e: Throwable) {
                        stuck.emitFailure.set(e)
                    }
                    stuck.ended.countDown()
                    return@node
                }
                set(S.log, listOf("attempt $attempt"))
            }
            val b = node("b") { set(S.log, listOf("b")) }
            start(a)
            a then b
        }
        val run = try {
            bounded { g.record() }.also { stuck.stillRunning() }
        } finally {
            stuck.release.countDown()
        }
        run.result.status shouldBe Status.COMPLETED
        run.result.node("a").attempts shouldBe 2
        run.all<RunEvent.NodeRetrying>().single().error.shouldBeInstanceOf<NodeTimeoutException>()
        run.result.state[S.log] shouldBe listOf("attempt 2", "b")
        stuck.awaitEnd()
        // The abandoned attempt's event was refused: the run had ended, and events of an execution come before its end.
        stuck.emitFailure.get().shouldBeInstanceOf<CancellationException>()
        run.all<RunEvent.Custom>() shouldBe emptyList()
    }

    @Test
    fun `blocking code inside withContext(IO) times out at the deadline, not when it ends`(): Unit = runBlocking {
        val stuck = Stuck()
        val g = graph("io", S) {
            val a = node("a", timeout = 100.milliseconds) {
                withContext(Dispatchers.IO) {
                    stuck.release.await()
                    stuck.ended.countDown()
                }
                set(S.log, listOf("late"))
            }
            start(a)
        }
        try {
            val e = bounded { shouldThrow<GraphRunException> { g.invoke() } }
            e.cause.shouldBeInstanceOf<NodeTimeoutException>().nodeId shouldBe "a"
            stuck.stillRunning()
            e.result.state[S.log] shouldBe emptyList()
        } finally {
            stuck.release.countDown()
        }
    }

    @Test
    fun `a body that declares itself blocking with runInterruptible is interrupted at its deadline`(): Unit = runBlocking {
        val interrupted = AtomicBoolean()
        val ended = CountDownLatch(1)
        val never = CountDownLatch(1)
        val g = graph("interruptible", S) {
            val a = node("a", timeout = 100.milliseconds) {
                try {
                    runInterruptible(Dispatchers.IO) {
                        try {
                            never.await()
                        } catch (e: InterruptedException) {
                            interrupted.set(true)
                            throw e
                        }
                    }
                } finally {
                    ended.countDown()
                }
            }
            start(a)
        }
        bounded { shouldThrow<GraphRunException> { g.invoke() } }.cause.shouldBeInstanceOf<NodeTimeoutException>()
        withClue("the blocked thread was interrupted") { ended.await(20, TimeUnit.SECONDS) shouldBe true }
        interrupted.get() shouldBe true
    }
}
