package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.ResumedFailureException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * Compensation progress is checkpointed (`docs/semantics.md` §13.6): a process that stops in the middle of the
 * compensations of a failed run is resumed without repeating a compensation — each runs exactly once overall.
 */
abstract class CompensationPersistenceContract {
    protected abstract fun newStore(): CheckpointStore

    protected open fun cleanUp() {}

    @AfterEach
    fun tearDown() = cleanUp()

    object Order : StateSchema("order") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val amount = key("amount", default = 0)
    }

    private val compensations = ConcurrentHashMap<String, AtomicInteger>()

    private fun count(name: String) = compensations.computeIfAbsent(name) { AtomicInteger() }.incrementAndGet()

    /** A store that stops writing once [dead]: the process holding it "died" (nothing more reaches the database). */
    private class Dying(val inner: CheckpointStore) : CheckpointStore by inner {
        @Volatile
        var dead = false

        override suspend fun append(lease: Lease, record: CheckpointRecord) {
            check(!dead) { "the process died" }
            inner.append(lease, record)
        }
    }

    @Test
    fun `a run stopped in the middle of its compensations resumes them, each compensation exactly once`(): Unit =
        runBlocking {
            val inside = CompletableDeferred<Unit>()
            val first = Dying(newStore())
            val g = graph("order", Order) {
                val reserve = node("reserve") { set(Order.amount, 10) }
                val charge = node("charge") { update(Order.amount) { it * 2 } }
                val ship = node("ship") { set(Order.log, listOf("ship")) }
                val invoice = node("invoice") { error("invoice service down") }
                reserve.compensate { state ->
                    count("reserve")
                    check(state[Order.amount] == 10)
                }
                charge.compensate { state ->
                    count("charge")
                    check(state[Order.amount] == 20)
                    if (first.dead.not() && inside.isActive) {
                        first.dead = true // the process dies while it undoes the charge
                        inside.complete(Unit)
                        awaitCancellation()
                    }
                }
                ship.compensate { count("ship") }
                start(reserve)
                reserve then charge
                charge then ship
                ship then invoice
            }
            val job = launch {
                val checkpointing = Checkpointing(first, fullSnapshotEvery = 3)
                g.invoke(options = RunOptions(runId = "o1", checkpointing = checkpointing))
            }
            withTimeout(30_000) { inside.await() }
            job.cancelAndJoin()
            val store = newStore()
            g.checkpoints(store, "o1").last().status shouldBe "COMPENSATING"
            val failed = shouldThrow<GraphRunException> {
                withTimeout(30_000) { g.resume("o1", RunOptions(checkpointing = Checkpointing(store))) }
            }
            val result = failed.result
            result.status shouldBe Status.FAILED
            result.error.shouldBeInstanceOf<ResumedFailureException>().description shouldContain "invoice service down"
            result.compensations.map { "${it.nodeId}:${it.status}" } shouldContainExactly
                listOf("ship:COMPLETED", "charge:CANCELLED", "reserve:COMPLETED")
            compensations.mapValues { it.value.get() } shouldBe mapOf("ship" to 1, "charge" to 1, "reserve" to 1)
            g.checkpoints(store, "o1").last().status shouldBe "FAILED"
        }

    @Test
    fun `a failed run's compensations are checkpointed and its end records them`(): Unit = runBlocking {
        val store = newStore()
        val g = graph("order2", Order) {
            val reserve = node("reserve") { set(Order.amount, 10) }
            val invoice = node("invoice") { error("down") }
            reserve.compensate { count("reserve") }
            start(reserve)
            reserve then invoice
        }
        shouldThrow<GraphRunException> {
            g.invoke(options = RunOptions(runId = "o2", checkpointing = Checkpointing(store)))
        }.result.compensations.single().status shouldBe Status.COMPLETED
        val statuses = g.checkpoints(store, "o2").map { it.status }
        statuses.takeLast(3) shouldContainExactly listOf("COMPENSATING", "COMPENSATING", "FAILED")
        compensations["reserve"]!!.get() shouldBe 1
    }
}

/** [CompensationPersistenceContract] on the in-memory store. */
class InMemoryCompensationPersistenceTest : CompensationPersistenceContract() {
    private val store = InMemoryCheckpointStore()

    override fun newStore(): CheckpointStore = store
}

/** [CompensationPersistenceContract] on a temporary SQLite file; every store opens it anew. */
class SqliteCompensationPersistenceTest : CompensationPersistenceContract() {
    private val db = SqlDatabase(Backend.SQLITE)

    override fun newStore(): CheckpointStore = db.store()

    override fun cleanUp() = db.close()
}
