@file:OptIn(ExperimentalCoroutinesApi::class)

package dev.trellis.runtime

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.Retry
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.collect
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import java.util.Collections
import java.util.concurrent.Executors
import java.util.concurrent.ThreadFactory
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/** Cancellation of `docs/semantics.md` §6: cooperative, reported, rethrown, leak-free. */
class CancellationTest {
    object S : StateSchema("cancel") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** s, then a and b that run until cancelled, recording that they observed the cancellation. */
    private class Blocking {
        val started = AtomicInteger()
        val bothRunning = CompletableDeferred<Unit>()
        val observed: MutableSet<String> = Collections.synchronizedSet(HashSet())

        val g: Graph = graph("blocking", S) {
            val s = node("s") { set(S.log, listOf("s")) }
            start(s)
            for (id in listOf("a", "b")) {
                val n = node(id) {
                    if (started.incrementAndGet() == 2) bothRunning.complete(Unit)
                    try {
                        awaitCancellation()
                    } catch (e: CancellationException) {
                        observed += id
                        throw e
                    }
                }
                s then n
            }
        }
    }

    @Test
    fun `cancelling the collector of run cancels the nodes`() = runTest {
        val blocking = Blocking()
        val events = ArrayList<RunEvent>()
        val collector = launch { blocking.g.events(options = virtualTime()).collect { events += it } }
        blocking.bothRunning.await()
        collector.cancelAndJoin()
        blocking.observed shouldBe setOf("a", "b")
        EventInvariants.check(events, complete = false)
        events.filterIsInstance<RunEvent.NodeStarted>().map { it.nodeId } shouldContainExactlyInAnyOrder
            listOf("s", "a", "b")
    }

    @Test
    fun `a cancelled invoke caller gets the CancellationException rethrown`() = runTest {
        val blocking = Blocking()
        var caught: Throwable? = null
        val caller = launch {
            try {
                blocking.g.invoke(options = virtualTime())
            } catch (e: Throwable) {
                caught = e
                throw e
            }
        }
        blocking.bothRunning.await()
        caller.cancelAndJoin()
        caught.shouldBeInstanceOf<CancellationException>()
        caller.isCancelled shouldBe true
        blocking.observed shouldBe setOf("a", "b")
    }

    @Test
    fun `a cancelled invoke caller on real threads gets the CancellationException rethrown`(): Unit = runBlocking {
        val blocking = Blocking()
        val caller =
            launch(Dispatchers.Default) { blocking.g.invoke(options = RunOptions(dispatcher = Dispatchers.Default)) }
        withTimeout(20.seconds) { blocking.bothRunning.await() }
        caller.cancel()
        withTimeout(20.seconds) { caller.join() }
        caller.isCancelled shouldBe true
        blocking.observed shouldBe setOf("a", "b")
    }

    @Test
    fun `RunHandle cancel ends the run CANCELLED with RunCancelled last`() = runTest {
        val blocking = Blocking()
        val events = ArrayList<RunEvent>()
        val handle = blocking.g.start(this, options = virtualTime()) { events += it }
        blocking.bothRunning.await()
        handle.cancel()
        val result = handle.await()
        result.status shouldBe Status.CANCELLED
        result.node("s").status shouldBe Status.COMPLETED
        result.node("a").status shouldBe Status.CANCELLED
        result.node("b").status shouldBe Status.CANCELLED
        result.state[S.log] shouldBe listOf("s")
        handle.isDone shouldBe true
        EventInvariants.check(events)
        events.last().shouldBeInstanceOf<RunEvent.RunCancelled>().result.status shouldBe Status.CANCELLED
        events.filterIsInstance<RunEvent.NodeCancelled>().map { it.nodeId } shouldContainExactlyInAnyOrder
            listOf("a", "b")
        blocking.observed shouldBe setOf("a", "b")
    }

    @Test
    fun `a node that swallows the cancellation is still reported`() = runTest {
        val running = CompletableDeferred<Unit>()
        val g = graph("swallow", S) {
            val a = node("a") {
                running.complete(Unit)
                try {
                    awaitCancellation()
                } catch (_: CancellationException) {
                    // Swallowed on purpose: a badly behaved node.
                }
                set(S.log, listOf("swallowed"))
            }
            val b = node("b") { }
            start(a)
            a then b
        }
        val events = ArrayList<RunEvent>()
        val handle = g.start(this, options = virtualTime()) { events += it }
        running.await()
        handle.cancel()
        val result = handle.await()
        result.status shouldBe Status.CANCELLED
        result.node("b").status shouldBe Status.PENDING
        EventInvariants.check(events)
        events.last().shouldBeInstanceOf<RunEvent.RunCancelled>()
        val end = events.single {
            it is RunEvent.NodeCompleted || it is RunEvent.NodeFailed ||
                it is RunEvent.NodeCancelled
        }
        end.shouldBeInstanceOf<RunEvent.NodeCancelled>().nodeId shouldBe "a"
        result.node("a").status shouldBe Status.CANCELLED
    }

    /**
     * A node that fails because its run was cancelled — it catches the cancellation and throws what a closed
     * connection would, or cancels the run itself and throws (a fleet claim found lost) — ends `CANCELLED`: it is not
     * retried and no failure is recorded, in the result, the events or the checkpoints.
     */
    @Test
    fun `a failure caused by the run's cancellation is the cancellation, not a node failure`() = runTest {
        for (retried in listOf(false, true)) {
            for (selfCancelled in listOf(false, true)) {
                val store = InMemoryCheckpointStore()
                val runId = "caused-$retried-$selfCancelled"
                val caused = CausedFailure(retried, selfCancelled)
                val events = ArrayList<RunEvent>()
                val handle = caused.graph.start(this, options = checkpointed(store, runId)) { events += it }
                caused.cancel = handle::cancel
                if (!selfCancelled) {
                    caused.running.await()
                    handle.cancel()
                }
                val result = handle.await()
                withClue("retried=$retried, selfCancelled=$selfCancelled") {
                    caused.attempts.get() shouldBe 1
                    result.status shouldBe Status.CANCELLED
                    result.errors shouldBe emptyList()
                    result.node("a").status shouldBe Status.CANCELLED
                    EventInvariants.check(events)
                    events.none { it is RunEvent.NodeFailed } shouldBe true
                    events.last().shouldBeInstanceOf<RunEvent.RunCancelled>()
                    store.history(runId).map { it.status }.none { it == "FAILED" } shouldBe true
                }
            }
        }
    }

    /** The same when the run is driven in its caller's coroutine (as a fleet worker's are) and that is cancelled. */
    @Test
    fun `a failure caused by the invoke caller's cancellation is the cancellation`() = runTest {
        for (selfCancelled in listOf(false, true)) {
            val store = InMemoryCheckpointStore()
            val runId = "caused-invoke-$selfCancelled"
            val caused = CausedFailure(retried = false, selfCancelled = selfCancelled)
            var caught: Throwable? = null
            val caller = launch {
                try {
                    caused.graph.invoke(options = RunOptions(runId = runId, checkpointing = Checkpointing(store)))
                } catch (e: Throwable) {
                    caught = e
                    throw e
                }
            }
            caused.cancel = { caller.cancel() }
            if (!selfCancelled) {
                caused.running.await()
                caller.cancel()
            }
            caller.join()
            withClue("selfCancelled=$selfCancelled") {
                caught.shouldBeInstanceOf<CancellationException>()
                caused.attempts.get() shouldBe 1
                store.history(runId).map { it.status }.none { it == "FAILED" } shouldBe true
            }
        }
    }

    /** `a` then `b`; `a` throws an ordinary exception once its run is cancelled, or [cancel]s the run and throws. */
    private class CausedFailure(retried: Boolean, selfCancelled: Boolean) {
        val attempts = AtomicInteger()
        val running = CompletableDeferred<Unit>()
        var cancel: () -> Unit = {}

        val graph: Graph = graph("caused", S) {
            val a = node("a", retry = if (retried) Retry.fixed(3, 1.seconds) else null) {
                attempts.incrementAndGet()
                if (selfCancelled) {
                    cancel()
                    throw IllegalStateException("the claim was lost")
                }
                running.complete(Unit)
                try {
                    awaitCancellation()
                } catch (_: CancellationException) {
                    throw java.io.IOException("connection closed")
                }
            }
            val b = node("b") { set(S.log, listOf("b")) }
            start(a)
            a then b
        }
    }

    @Test
    fun `no coroutine outlives a cancelled run`(): Unit = runBlocking {
        val parent = Job()
        val scope = CoroutineScope(parent + Dispatchers.Default)
        val blocking = Blocking()
        val handle = blocking.g.start(scope, options = RunOptions(dispatcher = Dispatchers.Default))
        withTimeout(20.seconds) { blocking.bothRunning.await() }
        handle.cancel()
        withTimeout(20.seconds) { handle.await() }.status shouldBe Status.CANCELLED
        // The parent completes only once every coroutine of the run has ended.
        parent.complete()
        withTimeout(20.seconds) { parent.join() }
        parent.children.toList() shouldBe emptyList()

        val collectorParent = Job()
        val blocking2 = Blocking()
        val collector = CoroutineScope(collectorParent + Dispatchers.Default).launch {
            blocking2.g.events(options = RunOptions(dispatcher = Dispatchers.Default)).collect()
        }
        withTimeout(20.seconds) { blocking2.bothRunning.await() }
        collector.cancel()
        collectorParent.complete()
        withTimeout(20.seconds) { collectorParent.join() }
        collectorParent.children.toList() shouldBe emptyList()
        blocking2.observed shouldBe setOf("a", "b")
    }

    @Test
    fun `no thread outlives a closed dispatcher`(): Unit = runBlocking {
        val threads = Collections.synchronizedList(ArrayList<Thread>())
        val factory = ThreadFactory { r -> Thread(r, "trellis-leak-test-${threads.size}").also { threads += it } }
        val pool = Executors.newFixedThreadPool(4, factory)
        val baseline = liveThreads()
        val dispatcher = pool.asCoroutineDispatcher()
        val options = RunOptions(dispatcher = dispatcher)
        repeat(20) {
            val blocking = Blocking()
            val handle = blocking.g.start(CoroutineScope(dispatcher), options = options)
            withTimeout(20.seconds) { blocking.bothRunning.await() }
            handle.cancel()
            withTimeout(20.seconds) { handle.await() }.status shouldBe Status.CANCELLED
        }
        val fine = graph("fine", S) {
            val a = node("a") {
                delay(1)
                set(S.log, listOf("a"))
            }
            start(a)
        }
        repeat(20) { fine.invoke(options = options).status shouldBe Status.COMPLETED }
        dispatcher.close()
        pool.awaitTermination(20, TimeUnit.SECONDS) shouldBe true
        threads.forEach { it.join(20_000) }
        threads.none { it.isAlive } shouldBe true
        (liveThreads() - baseline).filter { it.startsWith("trellis-leak-test") } shouldBe emptySet()
    }

    private fun liveThreads(): Set<String> =
        Thread.getAllStackTraces().keys.filter { it.isAlive }.map { it.name }.toSet()

    @Test
    fun `cancelling before the first node starts still ends with RunCancelled`() = runTest {
        val g = graph("early", S) {
            val a = node("a") { delay(10) }
            start(a)
        }
        val events = ArrayList<RunEvent>()
        val handle = g.start(this, options = virtualTime()) { events += it }
        handle.cancel()
        // Virtual time: a hang shows up as this timeout at once.
        withTimeout(10.seconds) { handle.await() }.status shouldBe Status.CANCELLED
        EventInvariants.check(events)
        events.last().shouldBeInstanceOf<RunEvent.RunCancelled>()
    }

    @Test
    fun `CancellationException thrown by a node body is not a node failure when the run is cancelled`() = runTest {
        val blocking = Blocking()
        val handle = blocking.g.start(this, options = virtualTime())
        blocking.bothRunning.await()
        handle.cancel()
        val result = handle.await()
        result.errors shouldBe emptyList()
        result.node("a").error shouldBe null
    }

    @Test
    fun `a cancelled run with a slow event consumer still delivers RunCancelled last`() = runTest {
        val emitted = AtomicInteger()
        val g = graph("chatty", S) {
            val a = node("a") {
                while (true) {
                    emitted.incrementAndGet()
                    emit("tick")
                }
            }
            val b = node("b") { awaitCancellation() }
            val s = node("s") { }
            start(s)
            s then a
            s then b
        }
        val events = ArrayList<RunEvent>()
        val handle = g.start(this, options = virtualTime()) { event ->
            events += event
            delay(10)
        }
        // Let the run fill the event buffer while the consumer lags behind.
        while (emitted.get() < 200) delay(10)
        handle.cancel()
        withTimeout(1_000.seconds) { handle.await() }.status shouldBe Status.CANCELLED
        EventInvariants.check(events)
        events.last().shouldBeInstanceOf<RunEvent.RunCancelled>()
        events.filterIsInstance<RunEvent.NodeCancelled>().map { it.nodeId } shouldContainExactlyInAnyOrder
            listOf("a", "b")
    }

    /** A store whose append of a checkpoint with [status] suspends until cancelled, once [entered] is complete. */
    private class StuckStore(
        private val status: String,
        private val delegate: CheckpointStore = InMemoryCheckpointStore(),
    ) :
        CheckpointStore by delegate {
        val entered = CompletableDeferred<Unit>()

        override suspend fun append(lease: Lease, record: CheckpointRecord) {
            if (record.status == status) {
                entered.complete(Unit)
                awaitCancellation()
            }
            delegate.append(lease, record)
        }
    }

    private fun TestScope.checkpointed(store: CheckpointStore, runId: String) = RunOptions(
        runId = runId,
        dispatcher = StandardTestDispatcher(testScheduler),
        timeSource = testScheduler.timeSource,
        checkpointing = Checkpointing(store),
    )

    private val oneNode = graph("final-checkpoint", S) { start(node("a") { set(S.log, listOf("a")) }) }

    @Test
    fun `cancelling invoke while the final checkpoint is being saved rethrows the CancellationException`() = runTest {
        val store = StuckStore("COMPLETED")
        var caught: Throwable? = null
        val caller = launch {
            try {
                // No dispatcher: the run's loop is the caller's coroutine, so nothing but the run can turn the failure
                // to save into the caller's CancellationException.
                oneNode.invoke(options = RunOptions(runId = "stuck-1", checkpointing = Checkpointing(store)))
            } catch (e: Throwable) {
                caught = e
                throw e
            }
        }
        store.entered.await()
        caller.cancelAndJoin()
        caught.shouldBeInstanceOf<CancellationException>()
        caller.isCancelled shouldBe true
        // The lease was released: another owner claims the run at once.
        store.release(store.claim("stuck-1", "another-owner"))
    }

    @Test
    fun `a run cancelled while its final checkpoint is being saved ends CANCELLED with RunCancelled last`() = runTest {
        val store = StuckStore("COMPLETED")
        val events = ArrayList<RunEvent>()
        val handle = oneNode.start(this, options = checkpointed(store, "stuck-2")) { events += it }
        store.entered.await()
        handle.cancel()
        handle.await().status shouldBe Status.CANCELLED
        EventInvariants.check(events)
        events.last().shouldBeInstanceOf<RunEvent.RunCancelled>()
    }

    @Test
    fun `cancelling invoke while a step's checkpoint is being saved rethrows the CancellationException`() = runTest {
        val store = StuckStore("RUNNING")
        var caught: Throwable? = null
        val caller = launch {
            try {
                oneNode.invoke(options = checkpointed(store, "stuck-3"))
            } catch (e: Throwable) {
                caught = e
                throw e
            }
        }
        store.entered.await()
        caller.cancelAndJoin()
        caught.shouldBeInstanceOf<CancellationException>()
    }
}
