package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.jdbc.JdbcCheckpointStore
import dev.trellis.checkpoint.jdbc.TransientFaults
import dev.trellis.checkpoint.postgres.internal.PostgresEngine
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import java.time.Clock
import java.time.Duration
import javax.sql.DataSource

/**
 * A [CheckpointStore] in PostgreSQL, for many workers sharing runs.
 *
 * On first use the store creates [schema] and its tables (`trellis_runs`, `trellis_checkpoints`,
 * `trellis_schema_version`) or migrates them, under an advisory lock so that several stores may start at once.
 * Every write locks the run's row with `SELECT … FOR UPDATE` and checks the lease's fencing epoch in the same
 * transaction, so two workers never both write a run. Connections come from [dataSource] one per operation, and
 * are returned at once; use a pool (HikariCP, see `docs/persistence-stores.md`). JDBC calls run on [dispatcher].
 *
 * **Leases and time.** Lease expiry is measured by the database's clock (`clock_timestamp()`), so a worker whose
 * own clock is off cannot take over a live run. Every transaction waits at most [lockTimeout] for a run's row lock
 * and runs each statement at most [statementTimeout]; the server ends a transaction left idle for [lockTimeout] (its
 * worker frozen or cut off), which frees the row for a takeover. A cancelled caller cancels its running statement.
 *
 * **Faults.** A fault that passes — a connection lost or reset, a server restarting or failing over (SQLSTATE class
 * `08`, `57P01`–`57P03`), a deadlock or serialization failure (`40P01`, `40001`), a row lock not granted in time
 * (`55P03`) — is retried on a fresh connection with exponential backoff for up to [unavailableAfter], and then
 * reported as [dev.trellis.checkpoint.CheckpointStoreUnavailableException] (the run stops resumable). An append
 * whose commit went through but whose answer was lost is found stored on the retry and counts as done. A server
 * that stops answering on an open connection is given [statementTimeout] plus 5 s before the connection is dropped
 * and the operation retried. Set the data source's own connect and login timeouts (pgjdbc's `connectTimeout`,
 * `loginTimeout`; HikariCP's `connectionTimeout`) so that opening a connection is bounded too.
 * See `docs/persistence.md`, "The fault model".
 *
 * ```kotlin
 * val dataSource = HikariDataSource(HikariConfig().apply { jdbcUrl = "jdbc:postgresql://db:5432/app?user=trellis" })
 * val store = PostgresCheckpointStore(dataSource)
 * ```
 *
 * @param dataSource where connections come from; the store does not close it.
 * @param schema the schema holding the tables: lower-case letters, digits and underscores.
 * @param clock the clock of lease expiry; `null` (the default) for the database's clock. Pass one only in tests
 *   (a test clock to expire leases), or when every worker's clock is known to agree.
 * @param leaseDuration how long a claim or renewal lasts.
 * @param dispatcher where blocking JDBC calls run.
 * @param lockTimeout the longest a transaction waits for a run's row lock, and the longest the server keeps a
 *   transaction that went idle (a frozen worker); PostgreSQL's `lock_timeout` and
 *   `idle_in_transaction_session_timeout` for the store's transactions.
 * @param statementTimeout the longest one statement of the store runs (`statement_timeout`).
 * @param unavailableAfter how long an operation retries faults that pass before it throws
 *   [dev.trellis.checkpoint.CheckpointStoreUnavailableException]; zero reports the first one at once.
 * @param groupCommit whether concurrent appends of any runs share transactions: one writer takes every append queued
 *   while its previous transaction committed and writes them in one, each run's lease epoch and parent checked as a
 *   lone append checks them (a refused append fails alone). An append still returns only once it is committed, so
 *   durability is unchanged; an append may wait for the batch before it, at most one more commit. Pays with many
 *   concurrent runs (`docs/persistence-stores.md`, "Group commit"); an append with none in flight goes alone.
 */
public class PostgresCheckpointStore private constructor(
    private val schema: String,
    delegate: JdbcCheckpointStore,
) : CheckpointStore by delegate {
    @JvmOverloads
    public constructor(
        dataSource: DataSource,
        schema: String = "trellis",
        clock: Clock? = null,
        leaseDuration: Duration = Duration.ofSeconds(30),
        dispatcher: CoroutineDispatcher = Dispatchers.IO,
        lockTimeout: Duration = DEFAULT_LOCK_TIMEOUT,
        statementTimeout: Duration = DEFAULT_STATEMENT_TIMEOUT,
        groupCommit: Boolean = false,
        unavailableAfter: Duration = DEFAULT_UNAVAILABLE_AFTER,
    ) : this(
        schema,
        JdbcCheckpointStore(
            PostgresEngine(dataSource, schema, dispatcher, lockTimeout, statementTimeout),
            clock,
            leaseDuration,
            groupCommit,
            unavailableAfter,
        ),
    )

    override fun toString(): String = "PostgresCheckpointStore(schema=$schema)"

    /** Defaults. */
    public companion object {
        /** How long a transaction waits for a row lock, and how long the server keeps an idle transaction. */
        @JvmField
        public val DEFAULT_LOCK_TIMEOUT: Duration = Duration.ofSeconds(10)

        /** How long an operation retries faults that pass (a lost connection, a restarting server): 30 s. */
        @JvmField
        public val DEFAULT_UNAVAILABLE_AFTER: Duration = TransientFaults.DEFAULT_UNAVAILABLE_AFTER

        /** How long one statement may run. */
        @JvmField
        public val DEFAULT_STATEMENT_TIMEOUT: Duration = Duration.ofSeconds(30)
    }
}
