package dev.trellis.samples.docs.stores

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.checkpoint.sqlite.SqliteCheckpointStore
import dev.trellis.testing.TestPostgres
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.postgresql.ds.PGSimpleDataSource
import java.nio.file.Files
import java.nio.file.Path
import java.time.Instant

/** The Kotlin examples of `docs/persistence-stores.md`, as the guide shows them, run and checked. */
class StoresGuideTest {
    @BeforeEach
    @AfterEach
    fun removeTheGuidesDatabase() {
        for (suffix in listOf("", "-wal", "-shm")) Files.deleteIfExists(Path.of("trellis.db$suffix"))
    }

    @Test
    fun `a process claims a run, appends a checkpoint under its lease, renews and releases it`(): Unit = runBlocking {
        val payloadJson = """{"scope":"trellis.run"}"""
        val store = SqliteCheckpointStore(Path.of("trellis.db"))
        var lease = store.claim("run-1", owner = "worker-${ProcessHandle.current().pid()}")
        val record = CheckpointRecord(
            runId = "run-1",
            sequence = 1,
            parentSequence = null,
            graphId = "support-bot",
            schemaVersion = 1,
            createdAt = Instant.now(),
            status = "RUNNING",
            kind = CheckpointRecord.Kind.FULL,
            payload = payloadJson,
        )
        store.append(lease, record)
        lease = store.renew(lease) // before lease.expiresAt
        store.release(lease) // when the run ends or this process stops working on it
        store.latest("run-1")?.payload shouldBe payloadJson
        store.runs().single().owner shouldBe null
        store.close()
    }

    @Test
    fun `the PostgreSQL store works through a HikariCP pool`(): Unit = runBlocking {
        val url = (TestPostgres.dataSource as PGSimpleDataSource).getURL()
        val schema = TestPostgres.newSchema()
        val pool = HikariDataSource(
            HikariConfig().apply {
                jdbcUrl = url // e.g. "jdbc:postgresql://db:5432/app?user=trellis"
                maximumPoolSize = 32 // at most the store dispatcher's parallelism (Dispatchers.IO: 64)
                connectionTimeout = 10_000 // ms a borrow may wait
            },
        )
        val store = PostgresCheckpointStore(pool, schema) // schema: "trellis" unless given
        try {
            val lease = store.claim("run-1", "worker-1")
            store.release(lease)
            store.runs().single().runId shouldBe "run-1"
        } finally {
            store.close()
            pool.close()
            TestPostgres.dropSchema(schema)
        }
    }
}
