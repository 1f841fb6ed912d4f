package dev.trellis.checkpoint

import dev.trellis.testing.TestClock
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.time.Duration

class InMemoryCheckpointStoreTest : CheckpointStoreContract() {
    override fun openStore(clock: TestClock): CheckpointStore = InMemoryCheckpointStore(clock)

    private fun small(maxRuns: Int) = InMemoryCheckpointStore(clock, Duration.ofSeconds(30), maxRuns)

    /** Claims [runId], saves one checkpoint with [status] and, unless [keepLease], releases the lease. */
    private suspend fun InMemoryCheckpointStore.write(runId: String, status: String, keepLease: Boolean = false) {
        val lease = claim(runId, "worker")
        append(lease, checkpoint(runId, 1, status = status))
        if (!keepLease) release(lease)
    }

    @Test
    fun `keeps every run up to the default bound of 1000`() = runTest {
        val store = InMemoryCheckpointStore(clock)
        store.maxRuns shouldBe InMemoryCheckpointStore.DEFAULT_MAX_RUNS
        repeat(1_001) { store.write("run-$it", "COMPLETED") }
        store.runs().size shouldBe 1_000
        store.latest("run-0") shouldBe null
        store.latest("run-1000")!!.status shouldBe "COMPLETED"
    }

    @Test
    fun `drops the least recently written ended run first, then paused ones`() = runTest {
        val store = small(3)
        store.write("paused-old", "INTERRUPTED")
        store.write("done-a", "COMPLETED")
        store.write("failed-b", "FAILED")
        store.write("new-1", "RUNNING")
        store.runs().map { it.runId } shouldContainExactly listOf("failed-b", "new-1", "paused-old")

        // writing a run again makes it recent
        val lease = store.claim("paused-old", "worker")
        store.append(lease, checkpoint("paused-old", 2, status = "INTERRUPTED"))
        store.release(lease)
        store.write("new-2", "RUNNING")
        store.runs().map { it.runId } shouldContainExactly listOf("new-1", "new-2", "paused-old")

        // no ended run left: the least recently written run without a live lease goes
        store.write("new-3", "RUNNING")
        store.runs().map { it.runId } shouldContainExactly listOf("new-2", "new-3", "paused-old")
    }

    @Test
    fun `never drops a run whose writer holds a live lease`() = runTest {
        val store = small(2)
        store.write("running-a", "RUNNING", keepLease = true)
        store.write("running-b", "RUNNING", keepLease = true)
        store.write("running-c", "RUNNING", keepLease = true)
        store.runs().size shouldBe 3 // over the bound while all three are being written

        clock.advance(Duration.ofMinutes(1)) // the leases lapse: their writers are gone
        store.write("next", "COMPLETED")
        store.runs().map { it.runId } shouldContainExactly listOf("next", "running-c")
    }

    @Test
    fun `a deleted run leaves the recency order too`() = runTest {
        val store = small(2)
        store.write("a", "COMPLETED")
        store.delete("a")
        store.write("b", "COMPLETED")
        store.write("c", "COMPLETED")
        store.runs().map { it.runId } shouldContainExactly listOf("b", "c")
    }

    @Test
    fun `rejects a bound below one`() {
        shouldThrow<IllegalArgumentException> { InMemoryCheckpointStore(0) }.message shouldContain "Int.MAX_VALUE"
        InMemoryCheckpointStore(Int.MAX_VALUE).toString() shouldBe "InMemoryCheckpointStore(maxRuns=2147483647)"
    }
}
