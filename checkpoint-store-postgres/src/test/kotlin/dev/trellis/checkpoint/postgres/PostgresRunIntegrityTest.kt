package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.checkpoint
import dev.trellis.testing.TestPostgres
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import java.sql.Connection
import java.time.Instant

/**
 * No checkpoint without its run, now that the checkpoints table has no foreign key to the runs (migration 4,
 * `docs/persistence-stores.md`, "The fencing rule"): the one statement and the checked transaction refuse a run whose
 * row is missing, also one deleted while the append waited for its row, and write nothing (a group commit's batch:
 * `PostgresGroupCommitTest`); and a schema made with the key loses it when migrated.
 */
class PostgresRunIntegrityTest {
    private val schema = TestPostgres.newSchema()

    @AfterEach
    fun cleanUp() {
        TestPostgres.dropSchema(schema)
    }

    @Test
    fun `an append to a run that was never claimed is refused and writes nothing`() = runBlocking<Unit> {
        val store = PostgresCheckpointStore(TestPostgres.dataSource, schema)
        val lease = Lease("ghost", "worker", 1, Instant.now().plusSeconds(30))
        // The next sequence goes the one-statement way first; a parent further back goes the checked way.
        for (record in listOf(checkpoint("ghost", 1), checkpoint("ghost", 3, parentSequence = 1))) {
            shouldThrow<FencedOutException> { store.append(lease, record) }.message shouldContain
                "Run 'ghost' no longer exists"
        }
        store.run("ghost") shouldBe null
        stored("ghost") shouldBe 0
    }

    @Test
    fun `an append with the lease of a deleted run is refused and writes nothing`() = runBlocking<Unit> {
        val store = PostgresCheckpointStore(TestPostgres.dataSource, schema)
        val lease = store.claim("run-1", "worker")
        store.append(lease, checkpoint("run-1", 1))
        store.delete("run-1")
        for (record in listOf(checkpoint("run-1", 2), checkpoint("run-1", 3, parentSequence = 1))) {
            shouldThrow<FencedOutException> { store.append(lease, record) }.message shouldContain
                "Run 'run-1' no longer exists"
        }
        stored("run-1") shouldBe 0
    }

    @Test
    fun `a run deleted while an append waits for its row takes the append with it`() = runBlocking<Unit> {
        val store = PostgresCheckpointStore(TestPostgres.dataSource, schema)
        val lease = store.claim("run-1", "worker")
        store.append(lease, checkpoint("run-1", 1))
        TestPostgres.dataSource.connection.use { deleter ->
            deleter.autoCommit = false
            deleter.prepareStatement("SELECT 1 FROM $schema.trellis_runs WHERE run_id = 'run-1' FOR UPDATE").use {
                it.executeQuery().close()
            }
            val append = async(Dispatchers.IO) { runCatching { store.append(lease, checkpoint("run-1", 2)) } }
            awaitLockWaiter()
            for (table in listOf("trellis_checkpoints", "trellis_runs")) {
                deleter.createStatement().use { it.executeUpdate("DELETE FROM $schema.$table WHERE run_id = 'run-1'") }
            }
            deleter.commit()
            val failure = append.await().exceptionOrNull()
            (failure is FencedOutException) shouldBe true
            failure!!.message!! shouldContain "Run 'run-1' no longer exists"
        }
        stored("run-1") shouldBe 0
    }

    @Test
    fun `the checkpoints table has no foreign key, and a schema made with one loses it when migrated`() =
        runBlocking<Unit> {
            PostgresCheckpointStore(TestPostgres.dataSource, schema).runs()
            foreignKeys() shouldBe emptyList()
            // As a schema made before version 4 has it.
            TestPostgres.dataSource.connection.use { c ->
                c.createStatement().use {
                    it.execute(
                        "ALTER TABLE $schema.trellis_checkpoints ADD CONSTRAINT trellis_checkpoints_run_id_fkey " +
                            "FOREIGN KEY (run_id) REFERENCES $schema.trellis_runs (run_id)",
                    )
                    it.execute("DELETE FROM $schema.trellis_schema_version WHERE version = 4")
                }
            }
            foreignKeys() shouldContainExactly listOf("trellis_checkpoints_run_id_fkey")
            val store = PostgresCheckpointStore(TestPostgres.dataSource, schema)
            val lease = store.claim("run-1", "worker")
            store.append(lease, checkpoint("run-1", 1))
            foreignKeys() shouldBe emptyList()
            store.history("run-1").map(CheckpointRecord::sequence) shouldContainExactly listOf(1L)
        }

    private fun stored(runId: String): Int = query { c ->
        c.prepareStatement("SELECT count(*) FROM $schema.trellis_checkpoints WHERE run_id = ?").use {
            it.setString(1, runId)
            it.executeQuery().use { rs ->
                rs.next()
                rs.getInt(1)
            }
        }
    }

    private fun foreignKeys(): List<String> = query { c ->
        c.prepareStatement(
            "SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid = ?::regclass ORDER BY conname",
        ).use {
            it.setString(1, "$schema.trellis_checkpoints")
            it.executeQuery().use { rs -> buildList { while (rs.next()) add(rs.getString(1)) } }
        }
    }

    /** Waits until a backend waits for a row lock in this test's runs table (the append blocked on the held row). */
    private suspend fun awaitLockWaiter() = withTimeout(WAIT_MILLIS) {
        while (true) {
            val waiting = query { c ->
                c.prepareStatement(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE ?",
                ).use {
                    it.setString(1, "%$schema.trellis_runs%")
                    it.executeQuery().use { rs ->
                        rs.next()
                        rs.getInt(1)
                    }
                }
            }
            if (waiting > 0) return@withTimeout
            kotlinx.coroutines.delay(10)
        }
    }

    private fun <T> query(block: (Connection) -> T): T = TestPostgres.dataSource.connection.use(block)

    private companion object {
        /** A safety net only: the append waits for the held row within milliseconds. */
        const val WAIT_MILLIS = 60_000L
    }
}
