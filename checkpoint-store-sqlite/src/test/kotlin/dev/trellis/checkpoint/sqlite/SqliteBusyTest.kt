package dev.trellis.checkpoint.sqlite

import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.checkpoint.checkpoint
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import java.sql.Connection
import java.sql.DriverManager
import java.time.Duration
import kotlin.io.path.deleteRecursively

/**
 * A writer frozen inside a transaction (another connection holding the file's write lock, as a process stopped with
 * SIGSTOP does): the store retries SQLITE_BUSY until its bound, then throws [CheckpointStoreUnavailableException]
 * naming the run and the file; once the writer goes on, the store goes on.
 */
class SqliteBusyTest {
    private val dir: Path = Files.createTempDirectory("trellis-sqlite-busy-")
    private val file: Path = dir.resolve("checkpoints.db")

    private fun store(unavailableAfter: Duration) = SqliteCheckpointStore(
        file,
        busyTimeout = Duration.ofMillis(20),
        unavailableAfter = unavailableAfter,
    )

    /** A connection of its own holding the file's write lock until it is closed (or commits). */
    private fun frozenWriter(): Connection = DriverManager.getConnection("jdbc:sqlite:${file.toAbsolutePath()}").also {
        it.createStatement().use { s -> s.execute("BEGIN IMMEDIATE") }
    }

    @OptIn(kotlin.io.path.ExperimentalPathApi::class)
    @AfterEach
    fun cleanUp() {
        dir.deleteRecursively()
    }

    @Test
    fun `a claim waits at most its bound for a frozen writer, then names the run, the file and what to do`() =
        runBlocking<Unit> {
            store(Duration.ofSeconds(30)).use { it.runs() } // creates the file and its tables
            store(Duration.ofMillis(400)).use { store ->
                frozenWriter().use {
                    val e = shouldThrow<CheckpointStoreUnavailableException> { store.claim("run-1", "worker") }
                    e.runId shouldBe "run-1"
                    e.operation shouldBe "claim"
                    e.store shouldBe file.toAbsolutePath().toString()
                    (e.waited >= Duration.ofMillis(400)) shouldBe true
                    e.message!! shouldContain "claim run 'run-1' in SQLite database"
                    e.message!! shouldContain "SIGSTOP"
                    e.message!! shouldContain "unavailableAfter"
                    e.message!! shouldContain "resume the run"
                }
                // The writer is gone: the same store claims at once.
                store.claim("run-1", "worker").epoch shouldBe 1
            }
        }

    @Test
    fun `SQLITE_BUSY is retried, an append waiting on a writer that goes on within the bound succeeds`() =
        runBlocking<Unit> {
            store(Duration.ofSeconds(60)).use { store ->
                val lease = store.claim("run-2", "worker")
                val writer = frozenWriter()
                val append = async(Dispatchers.IO) { store.append(lease, checkpoint("run-2", 1)) }
                delay(300) // the append meets SQLITE_BUSY at least once (its busy timeout is 20 ms) and retries
                append.isCompleted shouldBe false
                writer.close() // rolls back and lets go of the lock
                append.await()
                store.history("run-2").map { it.sequence } shouldBe listOf(1L)
            }
        }
}
