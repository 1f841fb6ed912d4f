package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.ResumableRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.retry
import dev.trellis.runtime.stateAt
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.time.Duration
import java.util.Collections

/**
 * Faults that are not the graph's (`docs/persistence.md`, "Faults"): a store that stays unreachable stops a run
 * resumable; a failed run is retried from its last checkpoint before the failure; `resume` checks a run's rows before
 * any node runs.
 */
class StoreFaultsTest {
    object S : StateSchema("store-faults") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val sum = key("sum", default = 0, reducer = Reducer.sum())
    }

    object S2 : StateSchema("store-faults", version = 2) {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
        val sum = key("sum", default = 0, reducer = Reducer.sum())
    }

    /** The bodies that ran to their end, as `node#execution`, in every run of the test. */
    private val ran: MutableList<String> = Collections.synchronizedList(ArrayList())
    private var compensated = 0

    @Volatile
    private var failB = false

    /** entry → a, b, c (in parallel: a ends at 10 ms, c at 15 ms, b at 20 ms) → join. */
    private fun fanOut(
        schema: StateSchema = S,
        log: StateKey<List<String>> = S.log,
        sum: StateKey<Int> = S.sum,
        compensates: Boolean = false,
    ): Graph = graph("store-faults", schema) {
        val entry = node("entry") {
            ran += "entry#$executionCount"
            set(log, listOf("entry"))
        }
        if (compensates) entry.compensate { compensated++ }
        val join = node("join") {
            ran += "join#$executionCount"
            set(log, listOf("join"))
        }
        start(entry)
        for ((i, name) in listOf("a", "b", "c").withIndex()) {
            val branch = node(name) {
                delay(listOf(10L, 20L, 15L)[i])
                if (name == "b" && failB) throw IllegalStateException("b is broken")
                ran += "$name#$executionCount"
                set(log, listOf(name))
                set(sum, i + 1)
            }
            entry then branch
            branch then join
        }
    }

    /** [inner], whose [failAt]-th append (counting from 1) and every later one fail as an unreachable store's do. */
    private class Unreachable(val inner: CheckpointStore, var failAt: Int) : CheckpointStore by inner {
        var appends = 0

        override suspend fun append(lease: Lease, record: CheckpointRecord) {
            if (++appends >= failAt) {
                throw CheckpointStoreUnavailableException(
                    "test-store",
                    "append",
                    record.runId,
                    Duration.ofSeconds(30),
                    "Could not append checkpoint ${record.sequence} of run '${record.runId}' to test-store: the " +
                        "store stayed unreachable for 30 s.",
                )
            }
            inner.append(lease, record)
        }
    }

    @Test
    fun `an unreachable store stops the run resumable, at every append, and resume loses nothing`() = runTest {
        val g = fanOut(compensates = true)
        val expected = g.invoke(options = RunOptions(checkpointing = Checkpointing(InMemoryCheckpointStore())))
        val appends = g.events(options = RunOptions(checkpointing = Checkpointing(InMemoryCheckpointStore())))
            .toList().count { it is RunEvent.CheckpointSaved }
        for (k in 1..appends) {
            withClue("append $k of $appends fails") {
                ran.clear()
                compensated = 0
                val memory = InMemoryCheckpointStore()
                val store = Unreachable(memory, k)
                val options = RunOptions(runId = "outage-$k", checkpointing = Checkpointing(store, owner = "first"))
                val e = shouldThrow<ResumableRunException> { g.invoke(options = options) }
                e.runId shouldBe "outage-$k"
                e.result.status shouldBe Status.INTERRUPTED
                e.result.stoppedBy shouldBe e.storeError
                e.result.errors shouldBe emptyList()
                e.message!! shouldContain "resume it"
                compensated shouldBe 0
                memory.latest("outage-$k")?.status shouldNotBe "FAILED"
                // The lease was released (the store answered the release): another owner resumes at once.
                val saved = memory.latest("outage-$k")?.let { g.stateAt(memory, "outage-$k")[S.log] } ?: emptyList()
                ran.clear()
                store.failAt = Int.MAX_VALUE
                val other = RunOptions(checkpointing = Checkpointing(store, owner = "second"))
                val result = if (memory.latest("outage-$k") == null) {
                    g.invoke(options = other.let { RunOptions(runId = "outage-$k", checkpointing = it.checkpointing) })
                } else {
                    g.resume("outage-$k", other)
                }
                result.status shouldBe Status.COMPLETED
                result.state[S.log].sorted() shouldBe expected.state[S.log].sorted()
                result.state[S.sum] shouldBe expected.state[S.sum]
                // No node whose completion was saved ran again.
                for (label in saved) ran.none { it.startsWith("$label#") } shouldBe true
            }
        }
    }

    object C : StateSchema("store-faults-child") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** first → sub (a child run: x → y) → last. */
    private fun nested(): Graph {
        val child = graph("store-faults-child", C) {
            val x = node("x") {
                delay(5)
                set(C.log, listOf("x"))
            }
            val y = node("y") {
                delay(5)
                set(C.log, listOf("y"))
            }
            start(x)
            x then y
        }
        return graph("store-faults-nested", S) {
            val first = node("first") { set(S.log, listOf("first")) }
            val sub = subgraph("sub", child) { output { c -> set(S.log, c[C.log]) } }
            val last = node("last") { set(S.log, listOf("last")) }
            start(first)
            first then sub
            sub then last
        }
    }

    @Test
    fun `an unreachable store under a child run stops the parent run resumable too`() = runTest {
        val g = nested()
        val counting = Unreachable(InMemoryCheckpointStore(), Int.MAX_VALUE)
        val expected = g.invoke(options = RunOptions(checkpointing = Checkpointing(counting)))
        for (k in 1..counting.appends) {
            withClue("append $k of ${counting.appends} fails") {
                val memory = InMemoryCheckpointStore()
                val store = Unreachable(memory, k)
                val options = RunOptions(runId = "nested-$k", checkpointing = Checkpointing(store))
                shouldThrow<ResumableRunException> { g.invoke(options = options) }
                memory.latest("nested-$k")?.status shouldNotBe "FAILED"
                store.failAt = Int.MAX_VALUE
                val result = if (memory.latest("nested-$k") == null) {
                    g.invoke(options = options)
                } else {
                    g.resume("nested-$k", RunOptions(checkpointing = Checkpointing(store)))
                }
                result.status shouldBe Status.COMPLETED
                result.state[S.log].sorted() shouldBe expected.state[S.log].sorted()
            }
        }
    }

    @Test
    fun `an unreachable store ends the event flow with RunInterrupted, stoppedBy set`() = runTest {
        val store = Unreachable(InMemoryCheckpointStore(), 2)
        val options = RunOptions(runId = "flow", checkpointing = Checkpointing(store))
        val events = fanOut().events(options = options).toList()
        val last = events.last() as RunEvent.RunInterrupted
        last.result.stoppedBy!!.operation shouldBe "append"
        events.none { it is RunEvent.RunFailed } shouldBe true
    }

    private suspend fun retryFlow(store: CheckpointStore, runId: String) {
        val g = fanOut()
        failB = true
        ran.clear()
        val options = RunOptions(runId = runId, checkpointing = Checkpointing(store))
        shouldThrow<GraphRunException> { g.invoke(options = options) }
        store.latest(runId)!!.status shouldBe "FAILED"
        // Still broken: the retry fails again, and can be retried again.
        shouldThrow<GraphRunException> { g.retry(runId, RunOptions(checkpointing = Checkpointing(store))) }
        val before = ran.toList()
        failB = false
        ran.clear()
        val result = g.retry(runId, RunOptions(checkpointing = Checkpointing(store)))
        result.status shouldBe Status.COMPLETED
        result.state[S.log].sorted() shouldBe listOf("a", "b", "c", "entry", "join")
        result.state[S.sum] shouldBe 6
        // Only the failed node and what followed it ran: entry, a and c completed before and were checkpointed.
        ran.sorted() shouldBe listOf("b#1", "join#1")
        before shouldContain "entry#1"
        val labels = g.checkpoints(store, runId).map { it.status }
        labels.count { it == "RETRY" } shouldBe 2
        labels.last() shouldBe "COMPLETED"
        // A completed run is not retried.
        shouldThrow<IllegalStateException> { g.retry(runId, RunOptions(checkpointing = Checkpointing(store))) }
            .message!! shouldContain "fork"
    }

    @Test
    fun `a failed run is retried from its last checkpoint before the failure - in memory`() = runTest {
        retryFlow(InMemoryCheckpointStore(), "retry-memory")
    }

    @Test
    fun `a failed run is retried from its last checkpoint before the failure - SQLite`() = runTest {
        SqlDatabase(Backend.SQLITE).use { db -> retryFlow(db.store(), "retry-sqlite") }
    }

    @Test
    fun `retry refuses a run that did not fail, and a graph whose schema changed without a migration`() = runTest {
        val store = InMemoryCheckpointStore()
        failB = true
        shouldThrow<GraphRunException> {
            fanOut().invoke(options = RunOptions(runId = "v1", checkpointing = Checkpointing(store)))
        }
        failB = false
        val e = shouldThrow<CheckpointFormatException> {
            fanOut(S2, S2.log, S2.sum).retry("v1", RunOptions(checkpointing = Checkpointing(store)))
        }
        e.message!! shouldContain "cannot be retried"
        e.message!! shouldContain "StateMigration"
        ran.clear()
        // A run that is not FAILED is resumed, not retried.
        val job = launch {
            fanOut().invoke(options = RunOptions(runId = "running", checkpointing = Checkpointing(store)))
        }
        testScheduler.advanceTimeBy(15)
        job.cancel()
        job.join()
        shouldThrow<IllegalStateException> {
            fanOut().retry("running", RunOptions(checkpointing = Checkpointing(store)))
        }.message!! shouldContain "graph.resume(\"running\", options)"
    }

    @Test
    fun `resume checks the run's rows before any node runs`() = runTest {
        SqlDatabase(Backend.SQLITE).use { db ->
            val store = db.store()
            val g = fanOut()
            // Stopped (resumable) at its third checkpoint: two are stored.
            shouldThrow<ResumableRunException> {
                g.invoke(options = RunOptions(runId = "corrupt", checkpointing = Checkpointing(Unreachable(store, 3))))
            }
            store.latest("corrupt")!!.status shouldBe "RUNNING"
            db.sql("UPDATE {runs} SET latest_sequence = latest_sequence + 5 WHERE run_id = 'corrupt'")
            ran.clear()
            val options = RunOptions(checkpointing = Checkpointing(store))
            val e = shouldThrow<GraphRunException> { g.resume("corrupt", options) }
            ran shouldBe emptyList()
            val message = e.cause!!.message!!
            message shouldContain "Run 'corrupt' cannot be continued"
            message shouldContain store.toString()
            message shouldContain "Repair the run's row"
        }
    }
}
