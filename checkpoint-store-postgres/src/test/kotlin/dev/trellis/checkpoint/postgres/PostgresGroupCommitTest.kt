package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.checkpoint
import dev.trellis.testing.TestClock
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.supervisorScope
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.sql.Connection
import java.time.Duration

/**
 * Group commit against the real database. To put appends in one batch for certain, a test holds the lock of one run's
 * row from its own connection: the writer's transaction for that run waits on it while the other appends queue up,
 * and once the lock is let go they make the next batch. Which transaction wrote a row is PostgreSQL's `xmin`.
 */
class PostgresGroupCommitTest {
    private val schema = TestPostgres.newSchema()
    private val clock = TestClock()
    private val store = PostgresCheckpointStore(TestPostgres.dataSource, schema, clock, groupCommit = true)

    @AfterEach
    fun cleanUp() {
        TestPostgres.dropSchema(schema)
    }

    @Test
    fun `appends queued while a batch commits are written in one transaction`() = runBlocking<Unit> {
        val leases = claimAll(10)
        val batch = withHeldRun(leases.getValue("blocker")) {
            (1..10).map { i -> appendLater(leases.getValue("run-$i"), 1) }
        }
        batch.awaitAll()
        writers((1..10).map { "run-$it" }).size shouldBe 1
        for (i in 1..10) store.latest("run-$i")!!.sequence shouldBe 1L
    }

    @Test
    fun `a run fenced out inside a batch fails alone`() = runBlocking<Unit> {
        val leases = claimAll(6)
        // run-3 is taken over by another worker: the lease held here is stale.
        val other = PostgresCheckpointStore(TestPostgres.dataSource, schema, clock)
        clock.advance(Duration.ofSeconds(31))
        val takeover = other.claim("run-3", "other")
        val batch = withHeldRun(leases.getValue("blocker")) {
            (1..6).associate { i -> "run-$i" to appendLater(leases.getValue("run-$i"), 1) }
        }
        val fenced = shouldThrow<FencedOutException> { batch.getValue("run-3").await() }
        fenced.currentEpoch shouldBe takeover.epoch
        for (i in listOf(1, 2, 4, 5, 6)) batch.getValue("run-$i").await()
        writers(listOf(1, 2, 4, 5, 6).map { "run-$it" }).size shouldBe 1
        store.history("run-3") shouldBe emptyList()
    }

    @Test
    fun `an append in a batch to a deleted run fails alone and writes nothing`() = runBlocking<Unit> {
        val leases = claimAll(3)
        // No foreign key stops it (migration 4): the batch's own check of the locked run rows does.
        store.delete("run-2")
        val batch = withHeldRun(leases.getValue("blocker")) {
            (1..3).associate { i -> "run-$i" to appendLater(leases.getValue("run-$i"), 1) }
        }
        shouldThrow<FencedOutException> { batch.getValue("run-2").await() }.message shouldContain
            "Run 'run-2' no longer exists"
        for (i in listOf(1, 3)) batch.getValue("run-$i").await()
        writers(listOf("run-1", "run-3")).size shouldBe 1
        store.history("run-2") shouldBe emptyList()
    }

    @Test
    fun `a batch whose transaction fails is written again append by append, and only the bad one fails`() =
        runBlocking<Unit> {
            val leases = claimAll(5)
            // A row the store did not write: inserting checkpoint 1 of run-2 breaks the primary key, in any batch.
            TestPostgres.dataSource.connection.use { c ->
                c.createStatement().use {
                    it.executeUpdate(
                        "INSERT INTO $schema.trellis_checkpoints (run_id, sequence, graph_id, schema_version, " +
                            "created_at, status, kind, payload, metadata) VALUES ('run-2', 1, 'g', 1, " +
                            "'2026-01-01T00:00:00Z', 'RUNNING', 'FULL', '{}', '{}')",
                    )
                }
            }
            val batch = withHeldRun(leases.getValue("blocker")) {
                (1..5).associate { i -> "run-$i" to appendLater(leases.getValue("run-$i"), 1) }
            }
            shouldThrow<CheckpointStoreException> { batch.getValue("run-2").await() }.message shouldContain "run-2"
            for (i in listOf(1, 3, 4, 5)) {
                batch.getValue("run-$i").await()
                store.latest("run-$i")!!.sequence shouldBe 1L
            }
            // Written alone after the batch rolled back: one transaction each.
            writers(listOf(1, 3, 4, 5).map { "run-$it" }).size shouldBe 4
        }

    @Test
    fun `a caller cancelled while its append waits withdraws it`() = runBlocking<Unit> {
        val leases = claimAll(2)
        val (kept, dropped) = withHeldRun(leases.getValue("blocker")) {
            val kept = appendLater(leases.getValue("run-1"), 1)
            val dropped = appendLater(leases.getValue("run-2"), 1)
            dropped.cancelAndJoin()
            kept to dropped
        }
        kept.await()
        dropped.join()
        dropped.isCancelled shouldBe true
        store.history("run-2") shouldBe emptyList()
        store.runs().single { it.runId == "run-2" }.latestSequence shouldBe 0L
        // The run goes on from where it was: its checkpoint 1 is still the next one.
        store.append(leases.getValue("run-2"), checkpoint("run-2", 1))
        store.latest("run-2")!!.sequence shouldBe 1L
    }

    @Test
    fun `appends of one run queued together are written in order, one batch each`() = runBlocking<Unit> {
        val leases = claimAll(1)
        val lease = leases.getValue("run-1")
        val appends = withHeldRun(leases.getValue("blocker")) {
            (1L..3L).map { sequence -> appendLater(lease, sequence) }
        }
        appends.awaitAll()
        store.history("run-1").map { it.sequence } shouldContainExactly listOf(1L, 2L, 3L)
        writers(listOf("run-1")).size shouldBe 3
    }

    @Test
    fun `many runs appending at once all land, each in order`() = runBlocking<Unit> {
        val leases = claimAll(40)
        supervisorScope {
            (1..40).map { i ->
                async(Dispatchers.IO) {
                    for (sequence in 1L..8L) store.append(leases.getValue("run-$i"), checkpoint("run-$i", sequence))
                }
            }.awaitAll()
        }
        for (i in 1..40) store.history("run-$i").map { it.sequence } shouldContainExactly (1L..8L).toList()
        // Far fewer transactions than appends: concurrent appends shared them.
        (writers((1..40).map { "run-$it" }).size < 40 * 8) shouldBe true
    }

    private suspend fun claimAll(n: Int): Map<String, Lease> =
        (listOf("blocker") + (1..n).map { "run-$it" }).associateWith { store.claim(it, "worker") }

    /** Queues the append of checkpoint [sequence] of [lease]'s run now, and returns its outcome for later. */
    private fun kotlinx.coroutines.CoroutineScope.appendLater(lease: Lease, sequence: Long): Deferred<Unit> =
        async(Dispatchers.IO, start = CoroutineStart.UNDISPATCHED) {
            store.append(lease, checkpoint(lease.runId, sequence))
        }

    /**
     * Holds the lock of [blocker]'s run row while an append of it is being written, runs [queue] (whose appends then
     * wait for the next batch), lets the lock go, and returns what [queue] returned once the blocker's append is done.
     */
    private suspend fun <T> withHeldRun(blocker: Lease, queue: suspend kotlinx.coroutines.CoroutineScope.() -> T): T =
        supervisorScope {
            TestPostgres.dataSource.connection.use { c ->
                c.autoCommit = false
                c.createStatement().use {
                    it.executeQuery("SELECT 1 FROM $schema.trellis_runs WHERE run_id = '${blocker.runId}' FOR UPDATE")
                        .close()
                }
                val first = async(Dispatchers.IO) { store.append(blocker, checkpoint(blocker.runId, 1)) }
                awaitWriterBlocked(c)
                val queued = queue()
                c.commit()
                first.await()
                queued
            }
        }

    /** Waits until a session of the store waits for the row lock [holder] holds. */
    private fun awaitWriterBlocked(holder: Connection) {
        val pid = holder.createStatement().use { s ->
            s.executeQuery("SELECT pg_backend_pid()").use {
                it.next()
                it.getInt(1)
            }
        }
        TestPostgres.dataSource.connection.use { c ->
            c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))").use {
                it.setInt(1, pid)
                while (it.executeQuery().use { rs -> rs.next() && rs.getInt(1) == 0 }) Thread.sleep(POLL_MILLIS)
            }
        }
    }

    /** The transactions that wrote the checkpoints of [runIds]. */
    private fun writers(runIds: List<String>): Set<String> = TestPostgres.dataSource.connection.use { c ->
        c.prepareStatement("SELECT DISTINCT xmin::text FROM $schema.trellis_checkpoints WHERE run_id = ANY(?)").use {
            it.setArray(1, c.createArrayOf("text", runIds.toTypedArray()))
            it.executeQuery().use { rs -> buildSet { while (rs.next()) add(rs.getString(1)) } }
        }
    }

    private companion object {
        const val POLL_MILLIS = 2L
    }
}
