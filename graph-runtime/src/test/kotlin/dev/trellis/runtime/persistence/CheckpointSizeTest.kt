package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.checkpoints
import dev.trellis.runtime.invoke
import dev.trellis.runtime.stateAt
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test

/**
 * Storage growth of checkpoints: a 100-node chain whose state grows by 400 bytes per node. Deltas keep each
 * checkpoint small, so the bytes stored grow linearly with the steps, not quadratically.
 */
class CheckpointSizeTest {
    object Growing : StateSchema("growing") {
        val items = key("items", default = emptyList<String>(), reducer = Reducer.append())
    }

    private val steps = 100
    private val chunkSize = 400

    private val chain: Graph = graph("growing-chain", Growing) {
        val nodes = (1..steps).map { i ->
            node("n$i") { set(Growing.items, listOf(chunk(i))) }
        }
        start(nodes.first())
        nodes.zipWithNext { a, b -> a then b }
    }

    /** A 400-character string (ASCII, so 400 bytes of UTF-8) particular to node [i]. */
    private fun chunk(i: Int): String = "n$i:".padEnd(chunkSize, ('a' + i % 26))

    private suspend fun runChain(
        store: InMemoryCheckpointStore,
        runId: String,
        fullSnapshotEvery: Int,
    ): List<CheckpointRecord> {
        val result = chain.invoke(
            options = RunOptions(
                runId = runId,
                checkpointing = Checkpointing(store, fullSnapshotEvery = fullSnapshotEvery),
            ),
        )
        result.status shouldBe Status.COMPLETED
        result.state[Growing.items] shouldHaveSize steps
        return store.history(runId)
    }

    private fun List<CheckpointRecord>.bytes(): Long = sumOf { it.payload.toByteArray(Charsets.UTF_8).size.toLong() }

    @Test
    fun `deltas keep the stored bytes linear in the steps`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val history = runChain(store, "deltas", fullSnapshotEvery = 100)
        // one at the start, one per completion, one at the end
        history shouldHaveSize steps + 2
        val deltas = history.filter { it.kind == CheckpointRecord.Kind.DELTA }
        val fulls = history.filter { it.kind == CheckpointRecord.Kind.FULL }
        fulls.map { it.sequence } shouldBe listOf(1L, 101L, 102L) // start, every 100th, end
        deltas shouldHaveSize steps - 1
        for (delta in deltas) {
            withClue("delta checkpoint ${delta.sequence} is ${delta.payload.length} characters") {
                delta.payload.length shouldBeLessThan 2_048
            }
        }
        val total = history.bytes()
        val deltaBytes = deltas.bytes()

        // The same run with a full snapshot at every step: what a store without deltas needs.
        val fullEveryStep = runChain(InMemoryCheckpointStore(), "fulls", fullSnapshotEvery = 1)
        fullEveryStep.all { it.kind == CheckpointRecord.Kind.FULL } shouldBe true
        val quadratic = fullEveryStep.bytes()

        println(
            "CheckpointSizeTest: $steps-node chain, $chunkSize B appended per node: " +
                "deltas ${deltaBytes / deltas.size} B per step on average " +
                "(max ${deltas.maxOf { it.payload.length }} B); all ${history.size} checkpoints $total B " +
                "(${total / steps} B per step, ${fulls.size} full snapshots of up to " +
                "${fulls.maxOf { it.payload.length }} B); a full snapshot per step would store $quadratic B " +
                "(${quadratic / steps} B per step)",
        )
        withClue("total $total B with deltas against $quadratic B with a full snapshot per step") {
            total shouldBeLessThan quadratic / 5
        }
        // linear: the deltas late in the run are no bigger than the early ones (the state grew 40 KB in between)
        val early = deltas.take(10).bytes()
        val late = deltas.takeLast(10).bytes()
        withClue("10 early deltas $early B, 10 late deltas $late B") { late shouldBeLessThan early + early / 5 }
    }

    @Test
    fun `prune keeps what the latest checkpoints need and stateAt still restores them`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val history = runChain(store, "pruned", fullSnapshotEvery = 10)
        history shouldHaveSize steps + 2
        // full snapshots at 1, 11, 21 … 101 and at the end (102); keeping the latest 5 (98 … 102) keeps the
        // chain of 98 back to its full snapshot at 91
        history.filter { it.kind == CheckpointRecord.Kind.FULL }.map { it.sequence } shouldBe
            (1L..101L step 10).toList() + 102L
        val deleted = store.prune("pruned", keepLatest = 5)
        deleted shouldBe 90
        chain.checkpoints(store, "pruned").map { it.sequence } shouldBe (91L..102L).toList()

        // checkpoint s follows s - 1 completions
        chain.stateAt(store, "pruned", 98)[Growing.items] shouldBe (1..97).map { chunk(it) }
        chain.stateAt(store, "pruned", 95)[Growing.items] shouldHaveSize 94
        chain.stateAt(store, "pruned")[Growing.items] shouldBe (1..steps).map { chunk(it) }
        shouldThrow<NoSuchElementException> { chain.stateAt(store, "pruned", 50) }.message shouldContain "pruned"

        store.prune("pruned", keepLatest = 1) shouldBe 11
        chain.checkpoints(store, "pruned").map { it.sequence } shouldBe listOf(102L)
        chain.stateAt(store, "pruned", 102)[Growing.items] shouldHaveSize steps
    }
}
