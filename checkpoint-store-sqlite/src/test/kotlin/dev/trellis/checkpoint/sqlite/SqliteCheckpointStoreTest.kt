package dev.trellis.checkpoint.sqlite

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.CheckpointStoreContract
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.checkpoint.checkpoint
import dev.trellis.testing.TestClock
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import java.sql.DriverManager
import java.time.Duration
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
                    it.getInt(1) shouldBe 2
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
