package dev.trellis.checkpoint.sqlite

import dev.trellis.checkpoint.CheckpointConflictException
import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.CheckpointStoreContract
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.checkpoint.checkpoint
import dev.trellis.checkpoint.internal.RunRow
import dev.trellis.checkpoint.internal.StoreRules
import dev.trellis.checkpoint.sqlite.internal.SqliteEngine
import dev.trellis.checkpoint.sqlite.internal.WalCheckpointer
import dev.trellis.testing.TestClock
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import java.sql.DriverManager
import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.CoroutineContext
import kotlin.io.path.deleteRecursively

class SqliteCheckpointStoreTest : CheckpointStoreContract() {
    private val dir: Path = Files.createTempDirectory("trellis-sqlite-")
    private val file: Path = dir.resolve("nested/checkpoints.db")

    override fun openStore(clock: TestClock): CheckpointStore = SqliteCheckpointStore(file, clock)

    @OptIn(kotlin.io.path.ExperimentalPathApi::class)
    override fun cleanUp() {
        dir.deleteRecursively()
    }

    @Test
    fun `two stores on one file race to claim a run and exactly one wins`() = runTest {
        // A fresh file: both stores also create the schema at the same time.
        val racer = SqliteCheckpointStore(dir.resolve("race.db"), clock)
        val other = SqliteCheckpointStore(dir.resolve("race.db"), clock)
        try {
            repeat(20) { i ->
                val outcomes = listOf(racer to "worker-a", other to "worker-b").map { (store, owner) ->
                    async(Dispatchers.IO) { runCatching { store.claim("run-$i", owner) } }
                }.awaitAll()
                withClue("outcomes of round $i: $outcomes") {
                    outcomes.count { it.isSuccess } shouldBe 1
                    (outcomes.single { it.isFailure }.exceptionOrNull() is RunOwnedException) shouldBe true
                }
            }
            racer.runs().size shouldBe 20
            other.runs().map { it.epoch }.distinct() shouldContainExactly listOf(1L)
        } finally {
            racer.close()
            other.close()
        }
    }

    @Test
    fun `two stores opening one new file at the same moment both work, one wins the claim`() = runTest {
        // Both switch the new file to WAL and create the schema at once; SQLite refuses the loser's switch at once
        // (without its busy timeout) unless the store retries it.
        repeat(200) { i ->
            val file = dir.resolve("fresh-$i.db")
            val stores = listOf(SqliteCheckpointStore(file, clock), SqliteCheckpointStore(file, clock))
            try {
                val outcomes = stores.mapIndexed {
                    n,
                    store,
                    ->
                    async(Dispatchers.IO) { runCatching { store.claim("run", "owner-$n") } }
                }.awaitAll()
                withClue("file $i: $outcomes") {
                    outcomes.count { it.isSuccess } shouldBe 1
                    (outcomes.single { it.isFailure }.exceptionOrNull() is RunOwnedException) shouldBe true
                }
            } finally {
                stores.forEach { it.close() }
            }
        }
    }

    @Test
    fun `a writer fenced out by another process cannot append`() = runTest {
        val processB = SqliteCheckpointStore(file, clock)
        try {
            val stalled = store.claim("run-1", "process-a")
            store.append(stalled, checkpoint("run-1", 1))
            clock.advance(Duration.ofSeconds(31))
            val takeover = processB.claim("run-1", "process-b")
            processB.append(takeover, checkpoint("run-1", 2))
            shouldThrow<FencedOutException> { store.append(stalled, checkpoint("run-1", 2)) }
            store.history("run-1").map { it.sequence } shouldContainExactly listOf(1L, 2L)
        } finally {
            processB.close()
        }
    }

    /** What [StoreRules.checkWritable] throws for [lease] against the run row as [reader] lists it. */
    private suspend fun expectedFencing(reader: CheckpointStore, lease: Lease): FencedOutException {
        val info = reader.runs().single { it.runId == lease.runId }
        val row = RunRow(
            info.runId,
            info.graphId,
            info.owner,
            info.leaseExpiresAt,
            info.epoch,
            info.latestSequence,
            info.latestStatus,
        )
        return shouldThrow<FencedOutException> { StoreRules.checkWritable(lease, row) }
    }

    @Test
    fun `an append refused by the run row's update throws the rules' exception and message, and writes nothing`() =
        runTest {
            val processB = SqliteCheckpointStore(file, clock)
            try {
                val stalled = store.claim("run-1", "process-a")
                store.append(stalled, checkpoint("run-1", 1))
                clock.advance(Duration.ofSeconds(31))
                val takeover = processB.claim("run-1", "process-b")
                processB.append(takeover, checkpoint("run-1", 2))

                // The next sequence by the stalled writer's count, and the next one by the run's: both fenced out.
                for (sequence in listOf(2L, 3L)) {
                    val fenced = shouldThrow<FencedOutException> {
                        store.append(stalled, checkpoint("run-1", sequence))
                    }
                    fenced.message shouldBe expectedFencing(processB, stalled).message
                    fenced.currentEpoch shouldBe 2
                }
                val gap = shouldThrow<CheckpointConflictException> { processB.append(takeover, checkpoint("run-1", 4)) }
                gap.message shouldBe "Cannot append checkpoint 4 to run 'run-1': the next sequence is 3 and that " +
                    "would leave a gap after 2. Re-read the latest checkpoint and continue from sequence 3."

                processB.release(takeover)
                val released = shouldThrow<FencedOutException> { processB.append(takeover, checkpoint("run-1", 3)) }
                released.message shouldBe expectedFencing(store, takeover).message
                val old = shouldThrow<FencedOutException> { store.append(stalled, checkpoint("run-1", 3)) }
                old.message shouldBe expectedFencing(store, stalled).message
                old.message!! shouldContain "has since released it"

                store.history("run-1").map { it.sequence } shouldContainExactly listOf(1L, 2L)
                val info = store.runs().single()
                info.latestSequence shouldBe 2
                info.epoch shouldBe 2
            } finally {
                processB.close()
            }
        }

    @Test
    fun `an append naming a stored parent further back than the latest is checked and written`() = runTest {
        val lease = store.claim("run-1", "worker-a")
        (1L..3L).forEach { store.append(lease, checkpoint("run-1", it)) }
        store.append(lease, checkpoint("run-1", 4, CheckpointRecord.Kind.DELTA, parentSequence = 2))
        store.latest("run-1")!!.parentSequence shouldBe 2
        store.runs().single().latestSequence shouldBe 4
    }

    /**
     * A dispatcher that holds the coroutines of the WAL checkpointer until [runHeld] and runs everything else on
     * [Dispatchers.IO].
     */
    private class HoldingCheckpoints : CoroutineDispatcher() {
        private val held = ConcurrentLinkedQueue<Runnable>()

        override fun dispatch(context: CoroutineContext, block: Runnable) {
            if (context[CoroutineName]?.name == "trellis-sqlite-wal-checkpoint") {
                held.add(block)
            } else {
                Dispatchers.IO.dispatch(context, block)
            }
        }

        /** Runs the held coroutines on this thread; returns how many there were. */
        fun runHeld(): Int {
            var n = 0
            while (true) {
                val block = held.poll() ?: return n
                block.run()
                n++
            }
        }
    }

    /** The frames in [file]'s WAL (pages written since it last started afresh), checkpointing it meanwhile. */
    private fun walFrames(): Int = DriverManager.getConnection("jdbc:sqlite:$file").use { c ->
        c.createStatement().use { s ->
            s.executeQuery("PRAGMA wal_checkpoint(PASSIVE)").use {
                it.next()
                it.getInt(2)
            }
        }
    }

    @Test
    fun `the WAL is checkpointed off the commits and starts afresh`() = runTest {
        val dispatcher = HoldingCheckpoints()
        SqliteCheckpointStore(file, clock, dispatcher = dispatcher).use { held ->
            val lease = held.claim("run-1", "worker-a")
            // Opening (the schema's transaction) and the claim were commits too: a checkpoint was asked for once.
            for (sequence in 1L until SqliteEngine.CHECKPOINT_EVERY) held.append(lease, checkpoint("run-1", sequence))
            dispatcher.runHeld() shouldBe 1
            // Every frame was copied while nothing wrote, so the next write starts the WAL from its beginning.
            held.append(lease, checkpoint("run-1", SqliteEngine.CHECKPOINT_EVERY.toLong()))
            walFrames() shouldBeLessThan 10
            held.history("run-1").size shouldBe SqliteEngine.CHECKPOINT_EVERY
        }
    }

    @Test
    fun `a long WAL the checkpointer could not copy to its end is checkpointed by the writer, then starts afresh`() =
        runTest {
            val dispatcher = HoldingCheckpoints()
            SqliteCheckpointStore(file, clock, dispatcher = dispatcher).use { held ->
                val lease = held.claim("run-1", "worker-a")
                // Each append writes at least three pages (the checkpoint row, its key, the run row), so this many
                // make the WAL long enough, while staying below SQLite's own automatic checkpoint (4,000 pages).
                val appends = WalCheckpointer.RESTART_FRAMES / 2
                DriverManager.getConnection("jdbc:sqlite:$file").use { reader ->
                    for (sequence in 1L..appends / 2) held.append(lease, checkpoint("run-1", sequence))
                    // A reader in another connection keeps the checkpoint from copying what comes after its snapshot,
                    // as a writer does that commits while a checkpoint runs.
                    reader.autoCommit = false
                    reader.createStatement().use { it.executeQuery("SELECT COUNT(*) FROM trellis_checkpoints").close() }
                    for (sequence in appends / 2 + 1L..appends) held.append(lease, checkpoint("run-1", sequence))
                    // Only the first request started a checkpoint; the later ones found it running.
                    dispatcher.runHeld() shouldBe 1
                    reader.rollback()
                }
                // It found the WAL long and left the rest to the writer, right after its next commit.
                held.append(lease, checkpoint("run-1", appends + 1L))
                held.append(lease, checkpoint("run-1", appends + 2L))
                walFrames() shouldBeLessThan 10
                dispatcher.runHeld() shouldBe 0
                held.latest("run-1")!!.sequence shouldBe appends + 2L
            }
        }

    @Test
    fun `the appends of the test above make the WAL long`() = runTest {
        // The reference of the test above: the same appends and reader, with every checkpoint held back.
        val dispatcher = HoldingCheckpoints()
        SqliteCheckpointStore(file, clock, dispatcher = dispatcher).use { held ->
            val lease = held.claim("run-1", "worker-a")
            val appends = WalCheckpointer.RESTART_FRAMES / 2
            DriverManager.getConnection("jdbc:sqlite:$file").use { reader ->
                for (sequence in 1L..appends / 2) held.append(lease, checkpoint("run-1", sequence))
                reader.autoCommit = false
                reader.createStatement().use { it.executeQuery("SELECT COUNT(*) FROM trellis_checkpoints").close() }
                for (sequence in appends / 2 + 1L..appends + 2L) held.append(lease, checkpoint("run-1", sequence))
                reader.rollback()
            }
            walFrames() shouldBeGreaterThanOrEqual WalCheckpointer.RESTART_FRAMES
        }
    }

    @Test
    fun `data survives reopening the store`() = runTest {
        val lease = store.claim("run-1", "worker-a")
        val records = listOf(checkpoint("run-1", 1), checkpoint("run-1", 2, CheckpointRecord.Kind.DELTA))
        records.forEach { store.append(lease, it) }
        store.close()

        store = SqliteCheckpointStore(file, clock)
        store.history("run-1") shouldContainExactly records
        val info = store.runs().single()
        info.owner shouldBe "worker-a"
        info.epoch shouldBe 1
        info.leaseExpiresAt shouldBe lease.expiresAt
        store.append(lease, checkpoint("run-1", 3))
        store.latest("run-1")!!.sequence shouldBe 3
    }

    @Test
    fun `the file is in WAL mode and the tables carry a schema version`() = runTest {
        store.runs()
        DriverManager.getConnection("jdbc:sqlite:$file").use { c ->
            c.createStatement().use { s ->
                s.executeQuery("PRAGMA journal_mode").use {
                    it.next()
                    it.getString(1) shouldBe "wal"
                }
                s.executeQuery("SELECT MAX(version) FROM trellis_schema_version").use {
                    it.next()
                    it.getInt(1) shouldBe 4
                }
            }
        }
    }

    @Test
    fun `JDBC calls run on the injected dispatcher`() = runTest {
        val dispatches = AtomicInteger()
        val counting = object : CoroutineDispatcher() {
            override fun dispatch(context: CoroutineContext, block: Runnable) {
                dispatches.incrementAndGet()
                Dispatchers.IO.dispatch(context, block)
            }
        }
        SqliteCheckpointStore(dir.resolve("dispatch.db"), clock, dispatcher = counting).use { counted ->
            counted.claim("run-1", "worker-a")
            counted.runs()
        }
        dispatches.get() shouldBeGreaterThan 1
    }
}
