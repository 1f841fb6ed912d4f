package dev.trellis.test.context

/** The checkpoint store a test gets: each test a fresh one, removed after it. */
public enum class StoreKind {
    /** An `InMemoryCheckpointStore`. */
    MEMORY,

    /** A `SqliteCheckpointStore` in a file of a temporary directory (needs `trellis-checkpoint-store-sqlite`). */
    SQLITE,

    /**
     * A `PostgresCheckpointStore` in a schema of its own, dropped after the test (needs
     * `trellis-checkpoint-store-postgres` and the PostgreSQL driver). The database is `TRELLIS_TEST_POSTGRES_URL`
     * (or the system property `trellis.test.postgres.url`), by default
     * `jdbc:postgresql://127.0.0.1:5432/test?user=postgres`.
     */
    POSTGRES,
}
