package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.internal.execution.StartCosts
import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.asContextElement
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReferenceArray

/**
 * Branches whose bodies never suspend (CPU work, blocking calls) still run in parallel on the default dispatcher,
 * whatever the runtime learned about how long their nodes take to start (`DriveRight`, `StartCosts`).
 * Each test proves overlap by a branch waiting, without suspending, for its sibling to start: run one after the
 * other, the first would wait out its deadline and the test would fail (never hang).
 */
@OptIn(InternalTrellisApi::class)
class ParallelStartTest {
    object S : StateSchema("parallel-start") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** entry -> a, b -> join; [body] is each branch's (non-suspending) work, given its index (0 or 1). */
    private fun diamond(body: (Int) -> String): Graph = graph("diamond", S) {
        val entry = node("entry") { }
        val join = node("join") { }
        start(entry)
        for (i in 0..1) {
            val branch = node("b$i") { set(S.log, listOf(body(i))) }
            entry then branch
            branch then join
        }
    }

    /** Spins (never suspends) until [started] counts both branches, or fails after [deadlineMillis]. */
    private fun awaitSibling(started: AtomicInteger, deadlineMillis: Long = 20_000): String {
        Stress.spinUntil(started, 2, "the sibling branch never started while this one ran", deadlineMillis)
        return "overlapped"
    }

    @Test
    fun `non-suspending branches overlap on the default dispatcher, run after run`() = runBlocking {
        var started = AtomicInteger()
        val g = diamond {
            started.incrementAndGet()
            awaitSibling(started)
        }
        repeat(5) { run ->
            started = AtomicInteger()
            val result = g.invoke()
            result.status shouldBe Status.COMPLETED
            result.state[S.log] shouldBe listOf("overlapped", "overlapped")
            result.nodes.getValue("join").executions shouldBe 1
        }
    }

    @Test
    fun `a node that was quick before and is long now does not hold up its queued sibling`() = runBlocking {
        val slow = AtomicBoolean(false)
        var started = AtomicInteger()
        val g = diamond {
            started.incrementAndGet()
            if (slow.get()) awaitSibling(started) else "quick"
        }
        repeat(3) {
            started = AtomicInteger()
            g.invoke().state[S.log] shouldBe listOf("quick", "quick")
        }
        // As if the runtime had learned that both branches finish at once when started (it learns that from timings,
        // which depend on the JIT): the worker that polls one of them starts it without asking for help first.
        for (i in 0 until g.topology.size) StartCosts.of(g.topology).set(i, 0)
        // Now whichever branch starts first spins until the other one starts: that needs a second thread.
        slow.set(true)
        repeat(3) {
            started = AtomicInteger()
            val result = g.invoke()
            result.status shouldBe Status.COMPLETED
            result.state[S.log] shouldBe listOf("overlapped", "overlapped")
        }
    }

    @Test
    fun `the caller's thread never runs a branch that takes long`() {
        val caller = java.util.concurrent.Executors.newSingleThreadExecutor { Thread(it, "caller-thread") }
        try {
            val threads = java.util.concurrent.ConcurrentHashMap.newKeySet<String>()
            val g = graph("busy", S) {
                val entry = node("entry") { }
                val join = node("join") { }
                start(entry)
                for (i in 0 until 3) {
                    val branch = node("b$i") {
                        threads += Thread.currentThread().name
                        val until = System.nanoTime() + 20_000_000 // 20 ms of CPU, no suspension
                        while (System.nanoTime() < until) Thread.onSpinWait()
                        set(S.log, listOf("b$i"))
                    }
                    entry then branch
                    branch then join
                }
            }
            repeat(3) {
                val result = runBlocking(caller.asCoroutineDispatcher()) { g.invoke() }
                result.status shouldBe Status.COMPLETED
                result.state[S.log].size shouldBe 3
            }
            // Thread names may carry a coroutine suffix (" @coroutine#7") in debug mode.
            withClue("threads that ran the branches: $threads") {
                threads.none { it.startsWith("caller-thread") } shouldBe
                    true
            }
        } finally {
            caller.shutdown()
        }
    }

    @Test
    fun `a wide fan-out of quick nodes completes every branch exactly once, run after run`() = runBlocking {
        val width = 200
        val seen = AtomicReferenceArray<String>(width)
        val g = graph("wide", S) {
            val entry = node("entry") { }
            val join = node("join") { set(S.log, listOf("join")) }
            start(entry)
            for (i in 0 until width) {
                val branch = node("b$i") {
                    check(seen.compareAndSet(i, null, Thread.currentThread().name)) { "b$i ran twice" }
                    set(S.log, listOf("b$i"))
                }
                entry then branch
                branch then join
            }
        }
        repeat(50) {
            for (i in 0 until width) seen.set(i, null)
            val result = g.invoke()
            result.status shouldBe Status.COMPLETED
            result.state[S.log].size shouldBe width + 1
            result.state[S.log].toSet().size shouldBe width + 1
            result.state[S.log].last() shouldBe "join"
        }
    }

    @Test
    fun `a quick node that suspends this time frees its worker for its siblings`() = runBlocking {
        val width = 8
        var released = kotlinx.coroutines.CompletableDeferred<Unit>()
        var suspending = false
        val g = graph("suspends", S) {
            val entry = node("entry") { }
            val join = node("join") { }
            start(entry)
            for (i in 0 until width) {
                val branch = node("b$i") {
                    // The first branch waits, suspended, for the last one: started one after another by one worker
                    // that the first held, the last would never start and the first would time out.
                    if (i == 0 && suspending) kotlinx.coroutines.withTimeout(20_000) { released.await() }
                    if (i == width - 1) released.complete(Unit)
                    set(S.log, listOf("b$i"))
                }
                entry then branch
                branch then join
            }
        }
        repeat(3) { g.invoke().state[S.log].size shouldBe width }
        // As if every branch had been learned quick: the worker that polls them starts them one after another.
        for (i in 0 until g.topology.size) StartCosts.of(g.topology).set(i, 0)
        suspending = true
        repeat(5) {
            released = kotlinx.coroutines.CompletableDeferred()
            val result = g.invoke()
            result.status shouldBe Status.COMPLETED
            result.state[S.log].toSet() shouldBe (0 until width).map { "b$it" }.toSet()
            result.nodes.getValue("join").executions shouldBe 1
        }
    }

    @Test
    fun `node bodies see the caller's thread-context elements, before and after they suspend`() {
        val local = ThreadLocal<String>()
        val seen = java.util.concurrent.ConcurrentLinkedQueue<String>()
        val g = graph("context", S) {
            val entry = node("entry") { }
            val join = node("join") { }
            start(entry)
            for (i in 0 until 4) {
                val branch = node("b$i") {
                    seen += "before:${local.get()}"
                    kotlinx.coroutines.yield()
                    seen += "after:${local.get()}"
                    set(S.log, listOf("b$i"))
                }
                entry then branch
                branch then join
            }
        }
        repeat(3) {
            seen.clear()
            val result = runBlocking(local.asContextElement("caller's")) { g.invoke() }
            result.status shouldBe Status.COMPLETED
            seen.toList().sorted() shouldBe List(4) { "after:caller's" } + List(4) { "before:caller's" }
        }
    }
}
