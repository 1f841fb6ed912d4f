package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.stateAt
import dev.trellis.testing.TestClock
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * One writer per run across processes: two store instances on one SQLite file or one PostgreSQL schema stand for
 * two processes working on the same run.
 */
class SingleWriterTest {
    object Doc : StateSchema("single-writer") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val approved = key<String?>("approved", default = null)
    }

    private val runs = ConcurrentHashMap<String, AtomicInteger>()

    private fun count(node: String) = runs.computeIfAbsent(node) { AtomicInteger() }.incrementAndGet()

    private fun runsOf(node: String) = runs[node]?.get() ?: 0

    private fun options(
        store: CheckpointStore,
        runId: String? = null,
        owner: String? = null,
        clock: java.time.Clock? = null,
    ): RunOptions {
        val checkpointing = if (owner ==
            null
        ) {
            Checkpointing(store, fullSnapshotEvery = 3)
        } else {
            Checkpointing(store, owner = owner, fullSnapshotEvery = 3)
        }
        return if (clock ==
            null
        ) {
            RunOptions(runId = runId, checkpointing = checkpointing)
        } else {
            RunOptions(runId = runId, clock = clock, checkpointing = checkpointing)
        }
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `two resumes of one interrupted run race and exactly one runs it`(backend: Backend): Unit = runBlocking {
        SqlDatabase(backend).use { db ->
            // The answered node waits until the other resume has failed, so the winner still holds the lease
            // when the loser claims.
            val loserFailed = CompletableDeferred<Unit>()
            val g = graph("race", Doc) {
                val ask = node("ask") {
                    count("ask")
                    val answer = interrupt("go?")
                    withTimeout(30_000) { loserFailed.await() }
                    set(Doc.approved, answer)
                }
                val after = node("after") {
                    count("after")
                    set(Doc.log, listOf("after"))
                }
                start(ask)
                ask then after
            }
            g.invoke(options = options(db.store(), "race-1")).status shouldBe Status.INTERRUPTED

            val stores = listOf(db.store(), db.store())
            val outcomes = withTimeout(60_000) {
                stores.mapIndexed { i, store ->
                    async(Dispatchers.Default) {
                        runCatching { g.resume("race-1", options(store, owner = "process-$i"), "answer-$i") }
                            .also { if (it.isFailure) loserFailed.complete(Unit) }
                    }
                }.awaitAll()
            }
            val completed = outcomes.filter { it.isSuccess }.map { it.getOrThrow() }
            val failed = outcomes.filter { it.isFailure }.map { it.exceptionOrNull()!! }
            withClue("outcomes: $outcomes") {
                completed.size shouldBe 1
                failed.size shouldBe 1
            }
            failed.single().shouldBeInstanceOf<RunOwnedException>().runId shouldBe "race-1"
            val winner = completed.single()
            winner.status shouldBe Status.COMPLETED
            runsOf("ask") shouldBe 2 // asked once, answered once: the loser started nothing
            runsOf("after") shouldBe 1
            val history = g.checkpoints(stores[0], "race-1")
            history.map { it.sequence } shouldBe (1L..history.size).toList()
            history.last().status shouldBe "COMPLETED"
            g.stateAt(stores[1], "race-1") shouldBe winner.state
        }
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `a resume whose run advanced between load and claim fails without re-running completed nodes`(
        backend: Backend,
    ): Unit = runBlocking {
        SqlDatabase(backend).use { db ->
            val g = graph("late", Doc) {
                val ask = node("ask") {
                    count("ask")
                    set(Doc.approved, interrupt("go?"))
                }
                val after = node("after") {
                    count("after")
                    set(Doc.log, listOf("after"))
                }
                start(ask)
                ask then after
            }
            g.invoke(options = options(db.store(), "late-1")).status shouldBe Status.INTERRUPTED
            val winnerStore = db.store()
            // The slow process has read the interrupted checkpoint; before it claims, another process resumes and
            // finishes the run (and releases it).
            val slowDelegate = db.store()
            var first = true
            val slowStore = object : CheckpointStore by slowDelegate {
                override suspend fun claim(runId: String, owner: String): Lease {
                    if (first) {
                        first = false
                        g.resume("late-1", options(winnerStore, owner = "winner"), "yes").status shouldBe
                            Status.COMPLETED
                    }
                    return slowDelegate.claim(runId, owner)
                }
            }
            val error =
                shouldThrow<IllegalStateException> {
                    withTimeout(30_000) { g.resume("late-1", options(slowStore, owner = "slow"), "no") }
                }
            error.message shouldContain "Run 'late-1' advanced to checkpoint"
            error.message shouldContain "nothing was run"
            runsOf("ask") shouldBe 2 // asked, answered by the winner; the slow process did not run it again
            runsOf("after") shouldBe 1
            val history = g.checkpoints(winnerStore, "late-1")
            history.last().status shouldBe "COMPLETED"
            g.stateAt(winnerStore, "late-1")[Doc.approved] shouldBe "yes"
        }
    }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `a stalled writer whose lease was taken over is fenced out and its run fails`(
        backend: Backend,
    ): Unit = runBlocking {
        SqlDatabase(backend).use { db ->
            val clock = TestClock()
            // A long lease in real time: the stalled engine's renewer sleeps half of it, so it never renews during
            // the test; the test expires the lease by moving the stores' clock.
            val lease = Duration.ofMinutes(10)
            val stalled = CompletableDeferred<Unit>()
            val unstall = CompletableDeferred<Unit>()
            val g = graph("stall", Doc) {
                val first = node("first") {
                    count("first")
                    set(Doc.log, listOf("first"))
                }
                val slow = node("slow") {
                    if (count("slow") == 1) {
                        stalled.complete(Unit)
                        withTimeout(30_000) { unstall.await() }
                    }
                    set(Doc.log, listOf("slow"))
                }
                val last = node("last") {
                    count("last")
                    set(Doc.log, listOf("last"))
                }
                start(first)
                first then slow
                slow then last
            }
            val storeA = db.store(clock, lease)
            val storeB = db.store(clock, lease)
            val runA = async(Dispatchers.Default) {
                runCatching { g.invoke(options = options(storeA, "stall-1", owner = "process-a", clock = clock)) }
            }
            withTimeout(30_000) { stalled.await() }
            val beforeTakeover = storeA.history("stall-1").map { it.sequence }
            beforeTakeover shouldBe listOf(1L, 2L) // start, after "first"

            clock.advance(lease.plusSeconds(1)) // A's lease expires; A is still inside "slow"
            val resultB =
                withTimeout(30_000) { g.resume("stall-1", options(storeB, owner = "process-b", clock = clock)) }
            resultB.status shouldBe Status.COMPLETED
            resultB.state[Doc.log] shouldContainExactly listOf("first", "slow", "last")
            val historyB = storeB.history("stall-1")

            unstall.complete(Unit)
            val outcomeA = withTimeout(30_000) { runA.await() }
            val error = outcomeA.exceptionOrNull().shouldBeInstanceOf<GraphRunException>()
            error.result.status shouldBe Status.FAILED
            error.result.error.shouldBeInstanceOf<FencedOutException>().runId shouldBe "stall-1"
            error.result.node("last").status shouldBe Status.PENDING

            runsOf("first") shouldBe 1
            runsOf("slow") shouldBe 2 // A's stalled execution and B's
            runsOf("last") shouldBe 1 // only B's
            // B's checkpoints are intact: A wrote nothing after the takeover
            val after = storeB.history("stall-1")
            after.map { it.sequence } shouldBe historyB.map { it.sequence }
            after.map { it.payload } shouldBe historyB.map { it.payload }
            after.map { it.sequence } shouldBe (1L..after.size).toList()
            after.last().status shouldBe "COMPLETED"
            g.stateAt(storeA, "stall-1") shouldBe resultB.state
        }
    }
}
