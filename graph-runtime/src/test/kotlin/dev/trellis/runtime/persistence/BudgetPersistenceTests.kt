package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Budget
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.LimitExceededException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.fork
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.util.concurrent.ConcurrentHashMap
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TestTimeSource

/**
 * Budgets across processes (`docs/semantics.md` §13.4): the totals and the time spent live in checkpoints, so a resumed
 * run and a fork go on from them. [newStore] called again stands for another process on the same database.
 */
abstract class BudgetPersistenceContract {
    protected abstract fun newStore(): CheckpointStore

    protected open fun cleanUp() {}

    @AfterEach
    fun tearDown() = cleanUp()

    object Doc : StateSchema("budget-doc") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val items = key("items", default = emptyList<String>())
    }

    private val runs = ConcurrentHashMap<String, Int>()

    /** draft (3 usd) -> approve (1 usd, then asks) -> publish (2 usd). */
    private val pipeline = graph("budget-pipeline", Doc) {
        val draft = node("draft") {
            charge("usd", 3.0)
            set(Doc.log, listOf("draft"))
        }
        val approve = node("approve") {
            charge("usd", 1.0)
            val answer = interrupt("publish?")
            set(Doc.log, listOf("approved: $answer"))
        }
        val publish = node("publish") {
            charge("usd", 2.0)
            set(Doc.log, listOf("publish"))
        }
        start(draft)
        draft then approve
        approve then publish
    }

    private fun options(store: CheckpointStore, runId: String? = null, budget: Budget? = null) =
        RunOptions(runId = runId, checkpointing = Checkpointing(store, fullSnapshotEvery = 2), budget = budget)

    @Test
    fun `totals survive an interrupt and a resume in another process, and the budget counts them`(): Unit =
        runBlocking {
            val first = newStore()
            val budget = Budget().withMeter("usd", 6.0)
            val paused = withTimeout(30_000) { pipeline.invoke(options = options(first, "b-resume", budget)) }
            paused.status shouldBe Status.INTERRUPTED
            paused.meters shouldBe mapOf("usd" to 4.0) // the interrupting attempt was paid for
            first.close()

            // Within the budget only if the totals before the resume were forgotten: 1 + 2 <= 6, but 4 + 1 + 2 > 6.
            val second = newStore()
            val result = withTimeout(30_000) {
                runCatching { pipeline.resume("b-resume", options(second, budget = budget), "yes") }
                    .exceptionOrNull().shouldBeInstanceOf<dev.trellis.runtime.GraphRunException>().result
            }
            result.status shouldBe Status.FAILED
            result.meters shouldBe mapOf("usd" to 7.0)
            val error = result.error.shouldBeInstanceOf<LimitExceededException>()
            error.nodeId shouldBe "publish"
            error.total shouldBe 7.0
            result.state[Doc.log] shouldBe listOf("draft", "approved: yes", "publish")

            // A larger budget: the same resume completes, with the same totals.
            val third = newStore()
            withTimeout(30_000) {
                pipeline.invoke(options = options(third, "b-resume-2", budget))
            }.status shouldBe Status.INTERRUPTED
            val done = withTimeout(30_000) {
                pipeline.resume("b-resume-2", options(newStore(), budget = Budget().withMeter("usd", 7.0)), "yes")
            }
            done.status shouldBe Status.COMPLETED
            done.meters shouldBe mapOf("usd" to 7.0)
        }

    @Test
    fun `a fork of the checkpoint where a budget stopped the run goes on from there with a larger budget`(): Unit =
        runBlocking {
            val store = newStore()
            val chain = graph("budget-chain", Doc) {
                val a = node("a") {
                    runs.merge("a", 1, Int::plus)
                    charge("usd", 2.0)
                    set(Doc.log, listOf("a"))
                }
                val b = node("b") {
                    runs.merge("b", 1, Int::plus)
                    charge("usd", 2.0)
                    set(Doc.log, listOf("b"))
                }
                val c = node("c") {
                    runs.merge("c", 1, Int::plus)
                    charge("usd", 2.0)
                    set(Doc.log, listOf("c"))
                }
                start(a)
                a then b
                b then c
            }
            val stopped = runCatching {
                chain.invoke(options = options(store, "b-fork", Budget().withMeter("usd", 3.0)))
            }.exceptionOrNull().shouldBeInstanceOf<dev.trellis.runtime.GraphRunException>().result
            stopped.status shouldBe Status.FAILED
            stopped.error.shouldBeInstanceOf<LimitExceededException>().nodeId shouldBe "b"
            val last = chain.checkpoints(store, "b-fork").last()
            last.status shouldBe "FAILED"

            // The same budget: the fork is over it before it starts anything.
            val refused = runCatching {
                chain.fork("b-fork", last.sequence, options(newStore(), "b-fork-same", Budget().withMeter("usd", 3.0)))
            }.exceptionOrNull().shouldBeInstanceOf<dev.trellis.runtime.GraphRunException>()
            val atStart = refused.cause.shouldBeInstanceOf<LimitExceededException>()
            atStart.nodeId.shouldBeNull()
            atStart.total shouldBe 4.0
            refused.result.node("c").status shouldBe Status.PENDING

            runs.clear()
            val more = options(newStore(), "b-fork-more", Budget().withMeter("usd", 10.0))
            val forked = chain.fork("b-fork", last.sequence, more)
            forked.status shouldBe Status.COMPLETED
            forked.meters shouldBe mapOf("usd" to 6.0)
            forked.state[Doc.log] shouldBe listOf("a", "b", "c")
            runs shouldBe mapOf("c" to 1) // a and b did not run again
        }

    @Test
    fun `the time spent is carried across a resume`(): Unit = runBlocking {
        val time = TestTimeSource()
        val slow = graph("budget-slow", Doc) {
            val think = node("think") { time += 5.seconds }
            val ask = node("ask") { interrupt("go on?") }
            val act = node("act") {
                time += 3.seconds
                set(Doc.log, listOf("act"))
            }
            start(think)
            think then ask
            ask then act
        }
        val budget = Budget().withMaxWallTime(7.seconds)
        val store = newStore()
        val opts = options(store, "b-time", budget).let {
            RunOptions(runId = it.runId, checkpointing = it.checkpointing, budget = budget, timeSource = time)
        }
        slow.invoke(options = opts).status shouldBe Status.INTERRUPTED
        time += 1000.seconds // waiting for the answer spends nothing
        val resumed = runCatching {
            slow.resume(
                "b-time",
                RunOptions(checkpointing = Checkpointing(newStore()), budget = budget, timeSource = time),
                "yes",
            )
        }.exceptionOrNull().shouldBeInstanceOf<dev.trellis.runtime.GraphRunException>().result
        resumed.status shouldBe Status.FAILED
        val error = resumed.error.shouldBeInstanceOf<LimitExceededException>()
        error.limit shouldBe "maxWallTime"
        error.nodeId shouldBe "act"
        error.total shouldBe java.time.Duration.ofSeconds(8)
    }

    @Test
    fun `a map interrupted by one task counts its finished tasks' charges once, after the resume`(): Unit =
        runBlocking {
            val fan = graph("budget-map", Doc) {
                start(
                    map("fan", over = Doc.items) { item ->
                        if (item == "ask") {
                            val answer = interrupt("ok?")
                            charge("usd", 10.0)
                            set(Doc.log, listOf(answer))
                        } else {
                            charge("usd", 1.0)
                            set(Doc.log, listOf(item))
                        }
                    },
                )
            }
            val input = stateOf(Doc.items to listOf("a", "ask", "b"))
            val store = newStore()
            val paused = fan.invoke(input, options(store, "b-map"))
            paused.status shouldBe Status.INTERRUPTED
            paused.meters shouldBe emptyMap<String, Double>()
            val done = fan.resume("b-map", options(newStore()), mapOf("fan[1]" to "yes"))
            done.status shouldBe Status.COMPLETED
            done.state[Doc.log] shouldBe listOf("a", "yes", "b")
            done.meters shouldBe mapOf("usd" to 12.0)
        }
}

/** [BudgetPersistenceContract] on the in-memory store. */
class InMemoryBudgetPersistenceTest : BudgetPersistenceContract() {
    private val store = InMemoryCheckpointStore()

    override fun newStore(): CheckpointStore = store
}

/** [BudgetPersistenceContract] on a temporary SQLite file; every store opens it anew. */
class SqliteBudgetPersistenceTest : BudgetPersistenceContract() {
    private val db = SqlDatabase(Backend.SQLITE)

    override fun newStore(): CheckpointStore = db.store()

    override fun cleanUp() = db.close()
}
