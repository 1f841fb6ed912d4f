package dev.trellis.test.internal

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.test.context.StoreKind
import java.nio.file.Files
import java.nio.file.Path
import java.util.UUID

/** A fresh store of [kind] and what removes it after the test. */
internal class TestStore(val store: CheckpointStore, val location: String, private val cleanup: () -> Unit) {
    private val closed = java.util.concurrent.atomic.AtomicBoolean()

    /** Closes the store and removes its data, once (JUnit may close the context again). */
    fun close() {
        if (!closed.compareAndSet(false, true)) return
        try {
            store.close()
        } finally {
            cleanup()
        }
    }

    companion object {
        const val POSTGRES_VARIABLE = "TRELLIS_TEST_POSTGRES_URL"
        const val POSTGRES_PROPERTY = "trellis.test.postgres.url"
        const val POSTGRES_DEFAULT = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"

        fun open(kind: StoreKind): TestStore = when (kind) {
            StoreKind.MEMORY -> TestStore(InMemoryCheckpointStore(), "memory") {}
            StoreKind.SQLITE -> needs("trellis-checkpoint-store-sqlite", "SQLITE") { sqlite() }
            StoreKind.POSTGRES -> needs("trellis-checkpoint-store-postgres and org.postgresql:postgresql", "POSTGRES") {
                postgres()
            }
        }

        private fun needs(artifacts: String, kind: String, open: () -> TestStore): TestStore = try {
            open()
        } catch (e: NoClassDefFoundError) {
            throw IllegalStateException(
                "StoreKind.$kind needs $artifacts on the test class path (${e.message} is missing); add the " +
                    "dependency with test scope.",
                e,
            )
        }

        private fun sqlite(): TestStore {
            val dir = Files.createTempDirectory("trellis-test-")
            val file = dir.resolve("checkpoints.db")
            val store = dev.trellis.checkpoint.sqlite.SqliteCheckpointStore(file)
            return TestStore(store, file.toString()) { deleteTree(dir) }
        }

        private fun postgres(): TestStore {
            val url = System.getProperty(POSTGRES_PROPERTY) ?: System.getenv(POSTGRES_VARIABLE) ?: POSTGRES_DEFAULT
            val source = org.postgresql.ds.PGSimpleDataSource().apply {
                setURL(url)
                connectTimeout = 30
                loginTimeout = 30
            }
            val schema = "trellis_test_" + UUID.randomUUID().toString().replace("-", "").take(16)
            val store = dev.trellis.checkpoint.postgres.PostgresCheckpointStore(source, schema)
            return TestStore(store, "$url schema $schema") {
                source.connection.use {
                    c ->
                    c.createStatement().use { it.execute("DROP SCHEMA IF EXISTS $schema CASCADE") }
                }
            }
        }

        private fun deleteTree(dir: Path) {
            Files.walk(dir).use {
                paths ->
                paths.sorted(Comparator.reverseOrder()).forEach { Files.deleteIfExists(it) }
            }
        }
    }
}
