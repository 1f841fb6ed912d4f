package dev.trellis.checkpoint.postgres.internal

import dev.trellis.checkpoint.jdbc.JdbcEngine
import dev.trellis.checkpoint.jdbc.Migrations
import dev.trellis.checkpoint.jdbc.inTransaction
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.postgresql.PGConnection
import java.sql.Connection
import java.sql.PreparedStatement
import java.sql.SQLException
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import javax.sql.DataSource
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext

/**
 * Borrows a connection from [dataSource] per transaction. Before the first one, creates or migrates [schema] under a
 * transaction-scoped advisory lock, so that stores starting at the same time on an empty database do not collide.
 * Run rows are locked with `SELECT … FOR UPDATE`.
 *
 * Every transaction bounds its waits (`SET LOCAL`, so a pooled connection keeps its own settings): a row lock is
 * waited for at most [lockTimeout], a statement runs at most [statementTimeout], and a transaction left idle for
 * [lockTimeout] — its worker frozen (SIGSTOP, a long GC pause) or cut off by the network — is ended by the server,
 * which frees the row it locked for a takeover. The bounds are set per transaction, not once per connection as
 * session settings: the connections are the application's (its pool's), which session settings would change for its
 * other users, and a pool or proxy may reset a session or, like PgBouncer's transaction pooling, run each
 * transaction on another server session, which would then run without bounds (`docs/persistence-stores.md`,
 * "Timeouts"). A cancelled caller cancels the running statement
 * (`PGConnection.cancelQuery`) instead of waiting for it. The client waits at most [statementTimeout] plus
 * [NETWORK_SLACK_MILLIS] for any answer of the server (the connection's network timeout): a connection that went
 * silent — a network partition, a stalled proxy — fails with a connection error (SQLSTATE 08006), and the store
 * retries on a fresh connection.
 */
internal class PostgresEngine(
    private val dataSource: DataSource,
    private val schema: String,
    private val dispatcher: CoroutineDispatcher,
    lockTimeout: Duration,
    statementTimeout: Duration,
) : JdbcEngine {
    override val description: String get() = "PostgreSQL schema $schema" + (url?.let { " at $it" } ?: "")
    override val location: String get() = url ?: "PostgreSQL schema $schema"

    /** The database's JDBC URL without credentials: the data source's, or else once a connection told it. */
    @Volatile
    private var url: String? = withoutCredentials(configuredUrl(dataSource))
    override val runsTable: String = "$schema.trellis_runs"
    override val checkpointsTable: String = "$schema.trellis_checkpoints"
    override val nodeCacheTable: String = "$schema.trellis_node_cache"
    override val lockRow: String = " FOR UPDATE"
    override val arrayParameters: Boolean = true
    override val nowMillisQuery: String = "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"

    private val lockMillis = millis(lockTimeout, "lockTimeout")
    private val statementMillis = millis(statementTimeout, "statementTimeout")
    private val networkMillis = (statementTimeout.toMillis() + NETWORK_SLACK_MILLIS).coerceAtMost(
        Int.MAX_VALUE.toLong(),
    )

    private val migrated = Mutex()

    @Volatile
    private var ready = false

    init {
        require(SCHEMA_NAME.matches(schema)) {
            "'$schema' is not a usable schema name; use lower-case letters, digits and underscores, starting with a " +
                "letter or underscore, at most 63 characters (for example \"trellis\")."
        }
    }

    override suspend fun <T> transaction(block: (Connection) -> T): T {
        migrate()
        return run(autoCommit = false, block)
    }

    /**
     * The statement runs committed on its own, after [boundSql] in the same round trip: pgjdbc sends a statement
     * string's statements with one `Sync`, so they share the implicit transaction that ends there and the bounds set
     * with `set_config(…, true)` apply to [sql] alone.
     */
    override suspend fun updateAlone(sql: String, bind: (PreparedStatement) -> Unit): Int {
        migrate()
        return short(autoCommit = true) { c ->
            c.prepareStatement(bounded.getOrPut(sql) { boundSql + sql }).use { statement ->
                bind(statement)
                statement.execute()
                check(!statement.moreResults) { "The statement after the bounds returned rows: $sql" }
                statement.updateCount
            }
        }
    }

    override suspend fun <T> shortTransaction(block: (Connection) -> T): T {
        migrate()
        return short(autoCommit = false, block)
    }

    /**
     * Runs a short operation ([shortTransaction], [updateAlone]) on the caller's thread when the caller waits on that
     * thread anyway — its coroutine runs in `runBlocking`, or on [dispatcher] itself — and on [dispatcher] otherwise:
     * the hop to another thread and back costs two thread wake-ups per operation (and several context switches),
     * more than the statement itself on a local server (`docs/persistence-stores.md`, "Which thread runs a call").
     */
    private suspend fun <T> short(autoCommit: Boolean, block: (Connection) -> T): T {
        val context = currentCoroutineContext()
        return if (waitsHere(context)) runHere(context, autoCommit, block) else run(autoCommit, block)
    }

    /** Whether the caller of [context] blocks its own thread while it waits (`runBlocking`) or is on [dispatcher]. */
    private fun waitsHere(context: CoroutineContext): Boolean {
        val interceptor = context[ContinuationInterceptor] ?: return false
        return interceptor === dispatcher || interceptor.javaClass.name == BLOCKING_EVENT_LOOP
    }

    /**
     * [run] on the caller's thread. A cancellation from another thread cancels the running statement as [run]'s does
     * (again every [CANCEL_RETRY_MILLIS] until the transaction ends, sent from [dispatcher]); the caller's
     * cancellation wins over the outcome, as in [run].
     */
    @OptIn(InternalCoroutinesApi::class)
    private fun <T> runHere(context: CoroutineContext, autoCommit: Boolean, block: (Connection) -> T): T {
        val job = context[Job]
        job?.ensureActive()
        val borrowed = Borrowed()
        val watch = job?.invokeOnCompletion(onCancelling = true) { borrowed.cancelUntilDone(dispatcher) }
        val outcome = try {
            runCatching { onConnection(borrowed, autoCommit, block) }
        } finally {
            borrowed.done()
            watch?.dispose()
        }
        job?.ensureActive()
        return outcome.getOrThrow()
    }

    private suspend fun migrate() {
        if (!ready) {
            migrated.withLock {
                if (!ready) {
                    run(autoCommit = false) { c ->
                        c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))").use {
                            it.setString(1, "trellis-checkpoint-store:$schema")
                            it.executeQuery().close()
                        }
                        c.createStatement().use { it.execute("CREATE SCHEMA IF NOT EXISTS $schema") }
                        Migrations.migrate(
                            c,
                            "$schema.trellis_schema_version",
                            runsTable,
                            checkpointsTable,
                            nodeCacheTable,
                            description,
                            enforcesForeignKeys = true,
                        )
                    }
                    ready = true
                }
            }
        }
    }

    /**
     * Runs [block] in a transaction on [dispatcher]. When the caller is cancelled, the statement running on the
     * connection is cancelled (again, until the transaction ends: a cancel that arrives between two statements is
     * lost), so the caller's cancellation — a `withTimeout` around a claim stuck on a locked row — returns at once.
     */
    private suspend fun <T> run(autoCommit: Boolean, block: (Connection) -> T): T = coroutineScope {
        val borrowed = Borrowed()
        // The outcome is returned, never thrown, so that a failure after the caller was cancelled (the statement
        // this cancellation cancelled) does not replace the caller's CancellationException.
        val work = async(dispatcher) { runCatching { onConnection(borrowed, autoCommit, block) } }
        try {
            work.await().getOrThrow()
        } catch (e: CancellationException) {
            withContext(NonCancellable) {
                while (!work.isCompleted) {
                    borrowed.cancelRunning()
                    withTimeoutOrNull(CANCEL_RETRY_MILLIS) { work.join() }
                }
            }
            throw e
        }
    }

    /** Runs [block] on a connection borrowed for it (lent to [borrowed] meanwhile), in auto-commit or a transaction. */
    private fun <T> onConnection(borrowed: Borrowed, autoCommit: Boolean, block: (Connection) -> T): T =
        dataSource.connection.use { c ->
            borrowed.lend(c)
            try {
                c.setNetworkTimeout(Runnable::run, networkMillis.toInt())
                if (url == null) url = withoutCredentials(c.metaData.url)
                if (autoCommit) {
                    if (!c.autoCommit) c.autoCommit = true
                    block(c)
                } else {
                    c.autoCommit = false
                    c.inTransaction { tx ->
                        bound(tx)
                        block(tx)
                    }
                }
            } finally {
                borrowed.giveBack()
            }
        }

    /**
     * The connection a transaction holds, and the only way to cancel its statement. A cancel request reaches the
     * server's backend process asynchronously (by a signal); sent to a connection already back in a pool, it would
     * cancel whatever statement the next borrower runs there. So sending a cancel and giving the connection back
     * exclude each other: [giveBack] waits for a cancel being sent, and once the pgjdbc call has returned the signal
     * is pending at the backend, which drops it if it is idle and otherwise cancels a statement of this transaction.
     */
    private class Borrowed {
        private val lock = Any()
        private var connection: Connection? = null

        fun lend(c: Connection) = synchronized(lock) { connection = c }

        fun giveBack() = synchronized(lock) { connection = null }

        fun cancelRunning() = synchronized(lock) {
            try {
                connection?.unwrap(PGConnection::class.java)?.cancelQuery()
            } catch (_: SQLException) {
                // The connection is closing or not PostgreSQL's own; the statement timeout still bounds the wait.
            }
        }

        @Volatile
        private var ended = false

        /** Marks the operation run on the caller's thread as ended: [cancelUntilDone] stops. */
        fun done() {
            ended = true
        }

        /**
         * Cancels the running statement from [dispatcher], again every [CANCEL_RETRY_MILLIS] until [done]: for an
         * operation on the caller's thread, whose canceller must not block (a cancel request opens a connection).
         */
        fun cancelUntilDone(dispatcher: CoroutineDispatcher) {
            CoroutineScope(dispatcher).launch {
                while (!ended) {
                    cancelRunning()
                    delay(CANCEL_RETRY_MILLIS)
                }
            }
        }
    }

    /**
     * [bound]'s settings that can apply to a statement run in auto-commit, as a statement of their own with the values
     * written in, to go before it in the same round trip ([updateAlone]). `idle_in_transaction_session_timeout` is left
     * out: the server starts that timer only when it reports itself idle (`ReadyForQuery`, after a `Sync`), and this
     * implicit transaction ends at its one `Sync`, so the setting could never fire here and only cost the server a
     * setting to make and undo per append.
     */
    private val boundSql =
        "SELECT set_config('lock_timeout', '$lockMillis', true), " +
            "set_config('statement_timeout', '$statementMillis', true); "

    /** Each statement [updateAlone] ran, after [boundSql]: made once, not once per call. */
    private val bounded = ConcurrentHashMap<String, String>()

    private fun bound(c: Connection) {
        c.prepareStatement(
            "SELECT set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true), " +
                "set_config('idle_in_transaction_session_timeout', ?, true)",
        ).use {
            it.setString(1, lockMillis)
            it.setString(2, statementMillis)
            it.setString(3, lockMillis)
            it.executeQuery().close()
        }
    }

    override fun unavailableAdvice(e: Throwable): String =
        "Check that the server is up and reachable from this process (network, failover, max_connections, the " +
            "pool's size); a server that restarts or fails over is waited for this long."

    override fun close() {
        // The data source belongs to the caller.
    }

    private companion object {
        val SCHEMA_NAME = Regex("[a-z_][a-z0-9_]{0,62}")
        const val CANCEL_RETRY_MILLIS = 100L

        /** The dispatcher of `runBlocking`'s event loop, whose thread waits for the coroutines it runs. */
        const val BLOCKING_EVENT_LOOP = "kotlinx.coroutines.BlockingEventLoop"

        /** How much longer than the statement timeout the client waits for an answer before it drops a connection. */
        const val NETWORK_SLACK_MILLIS = 5_000L

        private val CREDENTIALS = Regex("(?i)([?&;])(user|password|sslpassword|sslkey)=[^&;]*")

        /** The URL [dataSource] connects to, if it tells (pgjdbc's data sources, HikariCP's `jdbcUrl`). */
        fun configuredUrl(dataSource: DataSource): String? = try {
            if (dataSource is org.postgresql.ds.common.BaseDataSource) {
                dataSource.getUrl()
            } else {
                dataSource.javaClass.methods.firstOrNull { it.name == "getJdbcUrl" && it.parameterCount == 0 }
                    ?.invoke(dataSource) as? String
            }
        } catch (_: ReflectiveOperationException) {
            null
        }

        /** [url] without its user, password and key parameters, or user information. */
        fun withoutCredentials(url: String?): String? = url
            ?.replace(Regex("//[^/@]*@"), "//")
            ?.replace(CREDENTIALS, "$1")
            ?.replace(Regex("[?&;]+$"), "")
            ?.replace(Regex("([?&;])[&;]+"), "$1")

        fun millis(timeout: Duration, name: String): String {
            require(!timeout.isNegative && timeout.toMillis() in 1..Int.MAX_VALUE) {
                "$name must be between 1 ms and ${Int.MAX_VALUE} ms, but is $timeout; pass for example Duration.ofSeconds(10)."
            }
            return timeout.toMillis().toString()
        }
    }
}
