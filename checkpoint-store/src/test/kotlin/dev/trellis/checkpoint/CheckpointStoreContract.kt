package dev.trellis.checkpoint

import dev.trellis.checkpoint.CheckpointRecord.Kind.DELTA
import dev.trellis.checkpoint.CheckpointRecord.Kind.FULL
import dev.trellis.testing.TestClock
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import java.time.Duration

/**
 * The behaviour every [CheckpointStore] must have. Each implementation's test class extends this and says how to
 * open a fresh, empty store; the same tests then run against the real engine.
 */
abstract class CheckpointStoreContract {
    protected val clock = TestClock()
    protected lateinit var store: CheckpointStore

    /** Opens an empty store using [clock] with a 30 s lease. */
    protected abstract fun openStore(clock: TestClock): CheckpointStore

    /** Removes whatever [openStore] created outside the store (files, schemas). */
    protected open fun cleanUp() {}

    @BeforeEach
    fun open() {
        store = openStore(clock)
    }

    @AfterEach
    fun close() {
        if (::store.isInitialized) store.close()
        cleanUp()
    }

    @Test
    fun `appended checkpoints read back in order with parent links`() = runTest {
        val lease = store.claim("run-1", "worker-a")
        val records = listOf(
            checkpoint("run-1", 1),
            checkpoint("run-1", 2, DELTA),
            checkpoint("run-1", 3, DELTA, status = "COMPLETED"),
        )
        records.forEach { store.append(lease, it) }

        store.latest("run-1") shouldBe records[2]
        store.get("run-1", 2) shouldBe records[1]
        store.get("run-1", 4).shouldBeNull()
        store.history("run-1") shouldContainExactly records
        store.history("run-1").map { it.parentSequence } shouldContainExactly listOf(null, 1L, 2L)
        store.latest("unknown").shouldBeNull()
        store.history("unknown").shouldBeEmpty()
        val info = store.runs().single()
        info.runId shouldBe "run-1"
        info.graphId shouldBe "graph-a"
        info.owner shouldBe "worker-a"
        info.epoch shouldBe 1
        info.latestSequence shouldBe 3
        info.latestStatus shouldBe "COMPLETED"
    }

    @Test
    fun `runs are read one by id and listed in pages, filtered by status and graph`() = runTest {
        val statuses = listOf("r-a" to "COMPLETED", "r-b" to "FAILED", "r-c" to "COMPLETED", "r-d" to "RUNNING")
        for ((id, status) in statuses) {
            store.append(store.claim(id, "worker-a"), checkpoint(id, 1, status = status))
        }
        store.claim("r-e", "worker-a") // no checkpoint yet
        store.run("r-b")!!.latestStatus shouldBe "FAILED"
        store.run("r-e")!!.latestSequence shouldBe 0
        store.run("unknown").shouldBeNull()
        store.runs(RunQuery(limit = 2)).map { it.runId } shouldContainExactly listOf("r-a", "r-b")
        store.runs(RunQuery(after = "r-b", limit = 2)).map { it.runId } shouldContainExactly listOf("r-c", "r-d")
        store.runs(RunQuery(after = "r-d")).map { it.runId } shouldContainExactly listOf("r-e")
        store.runs(RunQuery(status = "COMPLETED")).map { it.runId } shouldContainExactly listOf("r-a", "r-c")
        store.runs(RunQuery(status = "COMPLETED", after = "r-a")).map { it.runId } shouldContainExactly listOf("r-c")
        val graph = store.run("r-a")!!.graphId!!
        store.runs(RunQuery(graphId = graph)).map { it.runId } shouldContainExactly listOf("r-a", "r-b", "r-c", "r-d")
        store.runs(RunQuery(graphId = "other")).shouldBeEmpty()
        shouldThrow<IllegalArgumentException> { RunQuery(limit = 0) }.message shouldContain "limit"
    }

    @Test
    fun `runs are listed newest first by when the store first saw them, paged by key`() = runTest {
        // Created z, y, x, w: newest first is w, x, y, z (the reverse of run id order would be z, y, x, w).
        val created = ArrayList<java.time.Instant>()
        for ((i, id) in listOf("z", "y", "x", "w").withIndex()) {
            val lease = store.claim(id, "worker-a")
            store.append(lease, checkpoint(id, 1, status = if (i % 2 == 0) "COMPLETED" else "FAILED"))
            created += store.run(id)!!.createdAt!!
            clock.advance(Duration.ofSeconds(1))
        }
        created.zipWithNext().all { (a, b) -> b > a } shouldBe true
        // A claim does not make a run newer: it keeps the time it was first recorded.
        store.claim("z", "worker-b".also { clock.advance(Duration.ofSeconds(60)) })
        store.run("z")!!.createdAt shouldBe created[0]

        suspend fun newest(after: String? = null, status: String? = null, limit: Int = 100) =
            store.runs(RunQuery(status, null, after, limit, RunQuery.Order.NEWEST_FIRST)).map { it.runId }
        newest(limit = 2) shouldContainExactly listOf("w", "x")
        newest(after = "x", limit = 2) shouldContainExactly listOf("y", "z")
        newest(after = "z").shouldBeEmpty()
        newest(status = "COMPLETED") shouldContainExactly listOf("x", "z")
        newest(status = "FAILED", after = "w") shouldContainExactly listOf("y")
        store.delete("x")
        shouldThrow<IllegalArgumentException> {
            store.runs(RunQuery(after = "x", order = RunQuery.Order.NEWEST_FIRST))
        }.message shouldContain "'x'"
        // By run id, as before.
        store.runs(RunQuery()).map { it.runId } shouldContainExactly listOf("w", "y", "z")
    }

    @Test
    fun `a fork records where it came from`() = runTest {
        val lease = store.claim("fork-1", "worker-a")
        val first = checkpoint("fork-1", 1, forkedFrom = CheckpointRef("run-1", 7))
        store.append(lease, first)
        store.get("fork-1", 1)!!.forkedFrom shouldBe CheckpointRef("run-1", 7)
        store.latest("fork-1") shouldBe first
    }

    @Test
    fun `a sequence gap, a repeated sequence and an unknown parent are rejected`() = runTest {
        val lease = store.claim("run-1", "worker-a")
        shouldThrow<CheckpointConflictException> { store.append(lease, checkpoint("run-1", 2)) }
            .message shouldContain "the next sequence is 1"
        store.append(lease, checkpoint("run-1", 1))
        val gap = shouldThrow<CheckpointConflictException> { store.append(lease, checkpoint("run-1", 3)) }
        gap.message shouldContain "gap after 1"
        gap.latestSequence shouldBe 1
        shouldThrow<CheckpointConflictException> { store.append(lease, checkpoint("run-1", 1)) }
            .message shouldContain "already exists"
        store.history("run-1").map { it.sequence } shouldContainExactly listOf(1L)
    }

    @Test
    fun `bad input is refused with a message naming it`() = runTest {
        shouldThrow<IllegalArgumentException> { store.claim(" ", "worker-a") }.message shouldContain "run id is blank"
        shouldThrow<IllegalArgumentException> { store.claim("run-1", "") }.message shouldContain "owner is blank"
        shouldThrow<IllegalArgumentException> { checkpoint("", 1) }.message shouldContain "runId is blank"
        shouldThrow<IllegalArgumentException> { checkpoint("run-1", 0) }.message shouldContain "start at 1"
        shouldThrow<IllegalArgumentException> { checkpoint("run-1", 2, DELTA, parentSequence = null) }
            .message shouldContain "DELTA without a parent"
        shouldThrow<IllegalArgumentException> { checkpoint("run-1", 3, parentSequence = 3) }
            .message shouldContain "earlier checkpoint"
        val lease = store.claim("run-1", "worker-a")
        shouldThrow<IllegalArgumentException> { store.append(lease, checkpoint("run-2", 1)) }
            .message shouldContain "lease of run 'run-1'"
        shouldThrow<IllegalArgumentException> { store.prune("run-1", 0) }.message shouldContain "keepLatest >= 1"
    }

    @Test
    fun `claim, renew and release`() = runTest {
        val lease = store.claim("run-1", "worker-a")
        lease.epoch shouldBe 1
        lease.expiresAt shouldBe clock.now.plusSeconds(30)

        clock.advance(Duration.ofSeconds(20))
        val renewed = store.renew(lease)
        renewed.epoch shouldBe 1
        renewed.expiresAt shouldBe clock.now.plusSeconds(30)
        store.runs().single().leaseExpiresAt shouldBe renewed.expiresAt

        store.release(renewed)
        store.runs().single().owner.shouldBeNull()
        shouldThrow<FencedOutException> { store.append(renewed, checkpoint("run-1", 1)) }.message shouldContain
            "released"
        shouldThrow<FencedOutException> { store.renew(renewed) }

        val next = store.claim("run-1", "worker-b")
        next.epoch shouldBe 2
        store.append(next, checkpoint("run-1", 1))
        store.release(renewed) // a stale release changes nothing
        store.runs().single().owner shouldBe "worker-b"
    }

    @Test
    fun `a second owner is rejected while the lease is live and accepted after it expires`() = runTest {
        val lease = store.claim("run-1", "worker-a")
        clock.advance(Duration.ofSeconds(29))
        val owned = shouldThrow<RunOwnedException> { store.claim("run-1", "worker-b") }
        owned.owner shouldBe "worker-a"
        owned.claimant shouldBe "worker-b"
        owned.leaseExpiresAt shouldBe lease.expiresAt
        owned.message shouldContain "Run 'run-1' is owned by 'worker-a'"
        owned.message shouldContain lease.expiresAt.toString()
        owned.message shouldContain "wait until the lease expires"

        val renewed = store.renew(lease)
        clock.advance(Duration.ofSeconds(29))
        shouldThrow<RunOwnedException> { store.claim("run-1", "worker-b") }

        clock.advance(Duration.ofSeconds(1))
        val takeover = store.claim("run-1", "worker-b")
        takeover.epoch shouldBe renewed.epoch + 1
        store.runs().single().owner shouldBe "worker-b"
    }

    @Test
    fun `a stalled writer with an old epoch cannot append after a takeover`() = runTest {
        val stalled = store.claim("run-1", "worker-a")
        store.append(stalled, checkpoint("run-1", 1))

        clock.advance(Duration.ofSeconds(31))
        val takeover = store.claim("run-1", "worker-b")
        store.append(takeover, checkpoint("run-1", 2, payload = """{"by":"b"}"""))

        val fenced = shouldThrow<FencedOutException> {
            store.append(stalled, checkpoint("run-1", 2, payload = """{"by":"a"}"""))
        }
        fenced.heldEpoch shouldBe 1
        fenced.currentEpoch shouldBe 2
        fenced.message shouldContain "took over run 'run-1' at epoch 2"
        fenced.message shouldContain "holds epoch 1 and must stop"
        // Even the sequence that would be next is refused: fencing is checked before the sequence.
        shouldThrow<FencedOutException> { store.append(stalled, checkpoint("run-1", 3)) }
        shouldThrow<FencedOutException> { store.renew(stalled) }
        store.latest("run-1")!!.payload shouldBe """{"by":"b"}"""
    }

    @Test
    fun `claiming again under the same owner fences out the earlier lease`() = runTest {
        val before = store.claim("run-1", "worker-a")
        val after = store.claim("run-1", "worker-a")
        after.epoch shouldBe before.epoch + 1
        shouldThrow<FencedOutException> { store.append(before, checkpoint("run-1", 1)) }
        store.append(after, checkpoint("run-1", 1))
    }

    @Test
    fun `concurrent appends of the same sequence, exactly one wins`() = runTest {
        val lease = store.claim("run-1", "worker-a")
        store.append(lease, checkpoint("run-1", 1))
        val outcomes = (1..8).map { i ->
            async(Dispatchers.Default) {
                runCatching { store.append(lease, checkpoint("run-1", 2, payload = """{"writer":$i}""")) }
            }
        }.awaitAll()
        outcomes.count { it.isSuccess } shouldBe 1
        outcomes.filter { it.isFailure }.forEach { (it.exceptionOrNull() is CheckpointConflictException) shouldBe true }
        store.history("run-1").size shouldBe 2
    }

    @Test
    fun `prune keeps the delta chain back to its FULL base`() = runTest {
        val lease = store.claim("run-1", "worker-a")
        listOf(FULL, DELTA, DELTA, FULL, DELTA, DELTA, DELTA).forEachIndexed { i, kind ->
            store.append(lease, checkpoint("run-1", i + 1L, kind))
        }
        // Keeping 2 keeps 6 and 7, which are deltas on 5, a delta on 4, the FULL base.
        store.prune("run-1", 2) shouldBe 3
        store.history("run-1").map { it.sequence } shouldContainExactly listOf(4L, 5L, 6L, 7L)
        store.prune("run-1", 1) shouldBe 0
        store.prune("run-1", 5) shouldBe 0

        store.append(lease, checkpoint("run-1", 8, FULL))
        store.prune("run-1", 1) shouldBe 4
        store.history("run-1").map { it.sequence } shouldContainExactly listOf(8L)

        // A checkpoint may not name a pruned parent.
        shouldThrow<CheckpointConflictException> {
            store.append(
                lease,
                checkpoint("run-1", 9, DELTA, parentSequence = 7),
            )
        }
            .message shouldContain "parent 7, which is not stored"
        store.append(lease, checkpoint("run-1", 9, DELTA))
        store.prune("unknown", 1) shouldBe 0
    }

    @Test
    fun `delete removes the run, its checkpoints and its lease`() = runTest {
        val lease = store.claim("run-1", "worker-a")
        store.append(lease, checkpoint("run-1", 1))
        val other = store.claim("run-2", "worker-a")
        store.append(other, checkpoint("run-2", 1))

        store.delete("run-1")
        store.history("run-1").shouldBeEmpty()
        store.runs().map { it.runId } shouldContainExactly listOf("run-2")
        shouldThrow<FencedOutException> { store.append(lease, checkpoint("run-1", 2)) }.message shouldContain "deleted"
        store.delete("unknown")

        val again = store.claim("run-1", "worker-b")
        again.epoch shouldBe 1
        store.append(again, checkpoint("run-1", 1))
        store.history("run-2").size shouldBe 1
    }

    @Test
    fun `runs are listed by id`() = runTest {
        listOf("b", "c", "a").forEach { store.claim(it, "worker-$it") }
        store.runs().map { it.runId } shouldContainExactly listOf("a", "b", "c")
        store.runs().first().latestSequence shouldBe 0
        store.runs().first().latestStatus.shouldBeNull()
    }

    @Test
    fun `a 1 MB payload and Unicode text survive byte for byte`() = runTest {
        val unit = "héllo wörld 世界 🌍🚀 \"quoted\" \\ back\\slash\n\ttab ' apostrophe; ∑∞ Ω — "
        val payload = buildString { while (length < 1_048_576) append(unit) }
        val runId = "run-ünïcødé-世界-🌍"
        val lease = store.claim(runId, "wörker-α")
        val record = checkpoint(
            runId,
            1,
            payload = payload,
            status = "RUNNING",
            metadata = mapOf("ключ" to "значение 🌍", "quote\"key" to "line\nbreak", "" to ""),
        )
        store.append(lease, record)
        val read = store.latest(runId)!!
        read.payload.length shouldBe payload.length
        (read.payload == payload) shouldBe true
        read shouldBe record
        store.runs().single().owner shouldBe "wörker-α"
    }
}
