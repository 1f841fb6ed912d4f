package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.Checkpointing.Durability
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicInteger

/**
 * `Checkpointing.Durability.ASYNC` (`docs/persistence.md`, "Durability: waiting for each step, or not"): step
 * checkpoints are written behind the run, in order, at most `MAX_PENDING` behind; the run's last checkpoint waits for
 * them; a refused one fails the run at its next checkpoint and nothing after it is written.
 */
class AsyncDurabilityTest {
    object S : StateSchema("async-durability") {
        val count = key("count", default = 0, reducer = Reducer.sum())
    }

    /** n1 → n2 → … → n[n]; each node calls [entered] with its number before it writes. */
    private fun chain(n: Int, entered: suspend (Int) -> Unit = {}): Graph = graph("async-chain", S) {
        val nodes = (1..n).map { i ->
            node("n$i") {
                entered(i)
                set(S.count, 1)
            }
        }
        start(nodes.first())
        nodes.zipWithNext { a, b -> a then b }
    }

    /** [inner], whose appends first wait for [gate] (of the sequence they append) and are counted once stored. */
    private class GatedStore(
        private val inner: CheckpointStore,
        private val gate: suspend (CheckpointRecord) -> Unit,
    ) : CheckpointStore by inner {
        val stored = AtomicInteger()

        override suspend fun append(lease: Lease, record: CheckpointRecord) {
            gate(record)
            inner.append(lease, record)
            stored.incrementAndGet()
        }
    }

    private fun options(store: CheckpointStore, runId: String, durability: Durability = Durability.ASYNC) =
        RunOptions(runId = runId, checkpointing = Checkpointing(store, durability = durability))

    @Test
    fun `the steps run ahead of their checkpoints, and the run returns once every one is stored`() = runBlocking<Unit> {
        val open = CompletableDeferred<Unit>()
        val store = GatedStore(InMemoryCheckpointStore()) { open.await() }
        val lastRan = CompletableDeferred<Int>()
        val graph = chain(10) { i -> if (i == 10) lastRan.complete(store.stored.get()) }
        val run = async(Dispatchers.Default) { graph.invoke(options = options(store, "ahead")) }
        withTimeout(SAFETY_MILLIS) {
            withClue("checkpoints stored when the last node ran") { lastRan.await() shouldBe 0 }
        }
        withClue("the run's end waits for its step checkpoints") { run.isCompleted shouldBe false }
        open.complete(Unit)
        val result = withTimeout(SAFETY_MILLIS) { run.await() }
        result.status shouldBe Status.COMPLETED
        result.state[S.count] shouldBe 10

        val reference = InMemoryCheckpointStore()
        chain(10).invoke(options = options(reference, "ahead", Durability.SYNC))

        fun shape(records: List<CheckpointRecord>) = records.map { Triple(it.sequence, it.status, it.kind) }
        shape(store.history("ahead")) shouldContainExactly shape(reference.history("ahead"))
        store.run("ahead")!!.owner shouldBe null
    }

    @Test
    fun `a run gets at most MAX_PENDING step checkpoints ahead of the store`() = runBlocking<Unit> {
        val pending = Durability.MAX_PENDING
        val released = CompletableDeferred<Unit>()
        // The first append waits until the run is as far ahead as it may be: node MAX_PENDING has started.
        val store = GatedStore(InMemoryCheckpointStore()) { if (it.sequence == 1L) released.await() }
        val most = AtomicInteger()
        // At node k's start, checkpoints 1..k (the start, and one after each node before it) were handed over.
        val graph = chain(3 * pending) { k ->
            most.accumulateAndGet(k - store.stored.get(), ::maxOf)
            if (k == pending) released.complete(Unit)
        }
        val result = withTimeout(SAFETY_MILLIS) { graph.invoke(options = options(store, "bounded")) }
        result.status shouldBe Status.COMPLETED
        most.get() shouldBe pending
        store.history("bounded").map { it.sequence } shouldBe (1L..3L * pending + 2).toList()
    }

    @Test
    fun `a refused step checkpoint fails the run at its next checkpoint, and nothing after it is stored`() =
        runBlocking<Unit> {
            val refused = FencedOutException("refused", 1, 2, "Another process took over run 'refused' (test).")
            val store = GatedStore(InMemoryCheckpointStore()) { if (it.sequence == 3L) throw refused }
            val result = withTimeout(SAFETY_MILLIS) {
                runCatching { chain(10).invoke(options = options(store, "refused")) }
            }
            val errors = result.fold({ it.errors }, { listOf(it) })
            withClue("the run fails with the store's refusal: $errors") {
                errors.any { e -> generateSequence(e) { it.cause }.any { it === refused } } shouldBe true
            }
            store.history("refused").map { it.sequence } shouldContainExactly listOf(1L, 2L)
            store.run("refused")!!.owner shouldBe null
        }

    @Test
    fun `a run whose last step checkpoints were never stored resumes from the latest stored one`() = runBlocking<Unit> {
        // The writer stores checkpoints 1..4 and then loses the rest, as a crash after them would.
        val inner = InMemoryCheckpointStore()
        val store = GatedStore(inner) { if (it.sequence > 4) throw IllegalStateException("lost with the process") }
        runCatching { chain(10).invoke(options = options(store, "lost")) }
        inner.history("lost").map { it.sequence } shouldContainExactly listOf(1L, 2L, 3L, 4L)

        // Checkpoint 4 holds n1..n3: the resume runs n4..n10, once each.
        val ran = mutableListOf<Int>()
        val resumed = withTimeout(SAFETY_MILLIS) {
            chain(10) { synchronized(ran) { ran += it } }
                .resume("lost", RunOptions(checkpointing = Checkpointing(inner, durability = Durability.ASYNC)))
        }
        resumed.status shouldBe Status.COMPLETED
        resumed.state[S.count] shouldBe 10
        ran shouldContainExactly (4..10).toList()
        inner.history("lost").map { it.sequence } shouldBe (1L..inner.history("lost").size).toList()
    }

    @Test
    fun `the durability is kept by every copy of the settings`() {
        val async = Checkpointing(InMemoryCheckpointStore()).withDurability(Durability.ASYNC)
        async.durability shouldBe Durability.ASYNC
        async.withLeaseWait(java.time.Duration.ofSeconds(5)).durability shouldBe Durability.ASYNC
        Checkpointing(InMemoryCheckpointStore()).durability shouldBe Durability.SYNC
    }

    private companion object {
        /** Only a broken run reaches it: the runs here take milliseconds. */
        const val SAFETY_MILLIS = 60_000L
    }
}
