package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeScope
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/**
 * What a parallel branch's body sees of its job (`docs/semantics.md` §10): its own, a child of the run, cancelled by
 * the run's cancellation and by fail-fast, waited for with what it launched — whether or not the body ever suspends.
 * Real threads: the branches overlap on the default dispatcher, started by the runtime's workers in a plain context
 * (the tests run without kotlinx.coroutines' debug mode, as production does); every wait has a deadline, so a broken
 * job fails a test instead of hanging it.
 */
class BranchJobTest {
    object S : StateSchema("branch-job") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** entry -> b0, b1 -> join, each branch running [body] with its index. */
    private fun diamond(failFast: Boolean = false, body: suspend NodeScope.(Int) -> Unit): Graph = graph("diamond", S) {
        config { this.failFast = failFast }
        val entry = node("entry") { }
        val join = node("join") { }
        start(entry)
        for (i in 0..1) {
            val branch = node("b$i") { body(i) }
            entry then branch
            branch then join
        }
    }

    /** Spins without suspending while the body's job is active; true when it stopped because the job was not. */
    private suspend fun spinWhileActive(): Boolean {
        val deadline = System.nanoTime() + 20_000_000_000L
        val context = currentCoroutineContext()
        while (context.isActive) {
            if (System.nanoTime() > deadline) return false
            Thread.onSpinWait()
        }
        return true
    }

    @Test
    fun `a branch that never suspends sees its run's cancellation through isActive`(): Unit = runBlocking {
        val spinning = AtomicInteger()
        val stoppedByCancellation = AtomicInteger()
        val g = diamond {
            spinning.incrementAndGet()
            if (spinWhileActive()) stoppedByCancellation.incrementAndGet()
        }
        val handle = g.start(this, options = RunOptions(dispatcher = kotlinx.coroutines.Dispatchers.Default))
        Stress.spinUntil(spinning, 2, "the branches never all started")
        handle.cancel()
        withTimeout(30.seconds) { handle.await() }.status shouldBe Status.CANCELLED
        stoppedByCancellation.get() shouldBe 2
    }

    @Test
    fun `a failing branch cancels a sibling that never suspends (fail-fast)`(): Unit = runBlocking {
        val spinning = AtomicInteger()
        val siblingStopped = AtomicBoolean(false)
        val g = diamond(failFast = true) { i ->
            if (i == 1) {
                spinning.incrementAndGet()
                siblingStopped.set(spinWhileActive())
            } else {
                Stress.spinUntil(spinning, 1, "the branches never all started")
                error("b0 fails")
            }
        }
        val result = shouldThrow<GraphRunException> { withTimeout(30.seconds) { g.invoke() } }.result
        result.status shouldBe Status.FAILED
        result.error!!.message shouldBe "b0 fails"
        siblingStopped.get() shouldBe true
        result.nodes.getValue("b1").status shouldBe Status.CANCELLED
    }

    @Test
    fun `64 branches suspended in delay overlap instead of running one after another`(): Unit = runBlocking {
        val g = graph("wide", S) {
            val entry = node("entry") { }
            val join = node("join") { }
            start(entry)
            for (i in 0 until 64) {
                val branch = node("b$i") {
                    delay(100)
                    set(S.log, listOf("b$i"))
                }
                entry then branch
                branch then join
            }
        }
        repeat(2) {
            val started = System.nanoTime()
            val result = withTimeout(30.seconds) { g.invoke() }
            val millis = (System.nanoTime() - started) / 1_000_000
            result.state[S.log].size shouldBe 64
            // One after another they would take 6.4 s; overlapping, about 100 ms (a loaded host: well under half).
            (millis < 3_200) shouldBe true
        }
    }

    @Test
    fun `what a branch launches in its own job is waited for by the run`(): Unit = runBlocking {
        val finished = AtomicInteger()
        val g = diamond { i ->
            CoroutineScope(currentCoroutineContext()).launch {
                delay(50)
                finished.incrementAndGet()
            }
            set(S.log, listOf("b$i"))
        }
        repeat(3) { run ->
            finished.set(0)
            val result = withTimeout(30.seconds) { g.invoke() }
            result.status shouldBe Status.COMPLETED
            // The run ends only after both branches' launched coroutines did.
            finished.get() shouldBe 2
            result.state[S.log].sorted() shouldBe listOf("b0", "b1")
        }
    }
}
