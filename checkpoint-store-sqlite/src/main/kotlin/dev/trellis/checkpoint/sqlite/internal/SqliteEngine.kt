package dev.trellis.checkpoint.sqlite.internal

import dev.trellis.checkpoint.jdbc.JdbcEngine
import dev.trellis.checkpoint.jdbc.Migrations
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import org.sqlite.SQLiteConfig
import org.sqlite.SQLiteConnection
import org.sqlite.SQLiteException
import java.nio.file.Files
import java.nio.file.Path
import java.sql.Connection
import java.sql.DriverManager
import java.sql.PreparedStatement
import java.time.Duration

/** SQLite's primary result code for a locked database file. */
private const val SQLITE_BUSY = 5

/** SQLite's primary result code for a locked table. */
private const val SQLITE_LOCKED = 6

/**
 * The WAL size, in pages, at which SQLite checkpoints inside a commit: a backstop only, four times SQLite's default
 * (1,000), so that [WalCheckpointer] normally checkpoints first, off the commit.
 */
private const val AUTO_CHECKPOINT_PAGES = 4000

/**
 * One SQLite connection to [path], opened on first use and guarded by a [Mutex]. Transactions begin with
 * `BEGIN IMMEDIATE`, which takes the file's write lock at once, so other processes on the same file wait (up to
 * the busy timeout) instead of failing halfway; WAL mode lets readers in other processes go on meanwhile. The
 * statements of an append are prepared once and kept while the connection is open. The WAL is checkpointed by a
 * [WalCheckpointer] every [CHECKPOINT_EVERY] commits, off the commits themselves.
 */
internal class SqliteEngine(
    private val path: Path,
    private val dispatcher: CoroutineDispatcher,
    private val busyTimeout: Duration,
    private val syncEveryCommit: Boolean = false,
) : JdbcEngine {
    override val description: String = "SQLite database $path"
    override val runsTable: String = "trellis_runs"
    override val checkpointsTable: String = "trellis_checkpoints"
    override val nodeCacheTable: String = "trellis_node_cache"
    override val lockRow: String = ""
    override val location: String get() = path.toAbsolutePath().toString()

    /**
     * SQLite's faults that pass: the file's write lock held by another connection past the busy timeout
     * (SQLITE_BUSY) or a table locked by one (SQLITE_LOCKED); and the generic ones.
     */
    override fun isTransient(e: Throwable): Boolean {
        if (e is SQLiteException && (e.resultCode.code and 0xff).let { it == SQLITE_BUSY || it == SQLITE_LOCKED }) {
            return true
        }
        return e !is SQLiteException && super.isTransient(e)
    }

    override fun unavailableAdvice(e: Throwable): String =
        "Another connection holds the file's write lock: a process writing it is stuck inside a transaction " +
            "(stopped with SIGSTOP or in a debugger, or frozen). Let that process go on or end it (its lease then " +
            "expires), or give this store a longer busyTimeout or unavailableAfter."

    private val mutex = Mutex()
    private var connection: Connection? = null
    private var closed = false
    private val busyMillis = busyTimeout.toMillis().coerceIn(1, Int.MAX_VALUE.toLong()).toInt()

    /** Statements prepared on [connection], by their SQL; used and changed only under [mutex]. */
    private val statements = HashMap<String, PreparedStatement>()

    /** Commits since the last checkpoint was requested; used and changed only under [mutex]. */
    private var commitsSinceCheckpoint = 0

    private val checkpointer = WalCheckpointer({ open(path, busyMillis, syncEveryCommit) }, dispatcher)

    /**
     * The mutex is taken and given back on [dispatcher], never on the caller's: released on a caller's dispatcher
     * that is busy (a node blocking a `runBlocking` thread), it would stay held until that dispatcher frees up, and
     * every other operation on the file — lease renewals of other runs included — would wait for it.
     */
    override suspend fun <T> transaction(block: (Connection) -> T): T = withContext(dispatcher) {
        mutex.withLock { connection().immediateTransaction(block) }
    }

    /**
     * On the caller's thread when nothing has to be waited for: the connection is open and free (the mutex is
     * taken without suspending and given back before returning, so no other dispatcher is involved), the file's
     * write lock is free (`BEGIN IMMEDIATE` with a busy timeout of zero) and a commit does not wait for the disk
     * (`synchronous=NORMAL`). Else on [dispatcher], as [transaction].
     */
    override suspend fun <T> shortTransaction(block: (Connection) -> T): T {
        if (!syncEveryCommit && mutex.tryLock()) {
            try {
                val open = connection
                if (open != null && !closed && open.beginAtOnce()) return open.committed(block)
            } finally {
                mutex.unlock()
            }
        }
        return transaction(block)
    }

    override fun <R> withStatement(c: Connection, sql: String, use: (PreparedStatement) -> R): R {
        if (c !== connection) return c.prepareStatement(sql).use(use)
        val statement = statements.getOrPut(sql) { c.prepareStatement(sql) }
        try {
            return use(statement).also { statement.clearParameters() }
        } catch (e: Throwable) {
            // A statement that failed is not kept: the next use prepares it afresh.
            statements.remove(sql)
            try {
                statement.close()
            } catch (closeFailure: java.sql.SQLException) {
                e.addSuppressed(closeFailure)
            }
            throw e
        }
    }

    /** Runs [sql], a statement without parameters or results, through [withStatement]. */
    private fun Connection.run(sql: String) {
        withStatement(this, sql) { it.execute() }
    }

    /**
     * Begins a write transaction if the file's write lock is free now; `false` if another connection holds it. The
     * connection's busy timeout is zero between transactions ([immediateTransaction] raises it for its own), so this
     * costs no call to change it. Once `BEGIN IMMEDIATE` holds the write lock, nothing else in a WAL transaction
     * waits for a lock (a commit appends to the WAL; SQLite's automatic checkpoint after it never waits).
     */
    private fun Connection.beginAtOnce(): Boolean {
        try {
            run("BEGIN IMMEDIATE")
            return true
        } catch (e: SQLiteException) {
            if (e.resultCode.code and 0xff != SQLITE_BUSY) throw e
            return false
        }
    }

    /**
     * The connection stays in auto-commit mode and transactions are begun by hand: the driver's own non-auto-commit
     * mode keeps a transaction open between operations, which with `IMMEDIATE` would hold the write lock forever and
     * with `DEFERRED` would pin an old snapshot for reads. The busy timeout is raised for the transaction and set
     * back to zero after it (see [beginAtOnce]).
     */
    private fun <T> Connection.immediateTransaction(block: (Connection) -> T): T {
        val sqlite = unwrap(SQLiteConnection::class.java)
        sqlite.setBusyTimeout(busyMillis)
        try {
            run("BEGIN IMMEDIATE")
            return committed(block)
        } finally {
            sqlite.setBusyTimeout(0)
        }
    }

    /**
     * Requests a [WalCheckpointer] checkpoint every [CHECKPOINT_EVERY] commits, or does the checkpoint it left to
     * this connection ([WalCheckpointer.catchUpWanted]). Never throws: the commit before it has succeeded.
     */
    private fun Connection.afterCommit() {
        if (checkpointer.catchUpWanted) {
            checkpointer.catchUpWanted = false
            try {
                // Not through withStatement: a failure here must not be taken for the transaction's.
                createStatement().use { it.execute("PRAGMA wal_checkpoint(PASSIVE)") }
            } catch (_: java.sql.SQLException) {
                // Left to the next checkpoint; the commit stands.
            }
        } else if (++commitsSinceCheckpoint >= CHECKPOINT_EVERY) {
            commitsSinceCheckpoint = 0
            checkpointer.request()
        }
    }

    /** Runs [block] in the transaction begun on this connection and commits; rolls back if [block] throws. */
    private fun <T> Connection.committed(block: (Connection) -> T): T {
        val result = try {
            block(this).also { run("COMMIT") }
        } catch (e: Throwable) {
            try {
                run("ROLLBACK")
            } catch (rollbackFailure: java.sql.SQLException) {
                e.addSuppressed(rollbackFailure)
            }
            throw e
        }
        afterCommit()
        return result
    }

    private fun connection(): Connection {
        check(!closed) { "$description was closed; create a new SqliteCheckpointStore to use it again." }
        connection?.let { return it }
        path.toAbsolutePath().parent?.let { Files.createDirectories(it) }
        val opened = open(path, busyMillis, syncEveryCommit)
        try {
            enableWal(opened, busyMillis)
            opened.createStatement().use { it.execute("PRAGMA wal_autocheckpoint=$AUTO_CHECKPOINT_PAGES") }
            opened.immediateTransaction {
                Migrations.migrate(
                    it,
                    "trellis_schema_version",
                    runsTable,
                    checkpointsTable,
                    nodeCacheTable,
                    description,
                )
            }
        } catch (e: Throwable) {
            opened.close()
            throw e
        }
        connection = opened
        return opened
    }

    /**
     * Switches the file to WAL mode (it stays so). Done here rather than by the driver while connecting: on a new
     * file, another connection doing the same at the same moment makes the switch fail with SQLITE_BUSY at once,
     * without waiting for the busy timeout, so it is retried until that timeout.
     */
    private fun enableWal(connection: Connection, busyMillis: Int) {
        val deadline = System.nanoTime() + busyMillis * 1_000_000L
        while (true) {
            try {
                connection.createStatement().use { statement -> statement.execute("PRAGMA journal_mode=WAL") }
                return
            } catch (e: SQLiteException) {
                if (e.resultCode.code and 0xff != SQLITE_BUSY || System.nanoTime() > deadline) throw e
                Thread.sleep(2)
            }
        }
    }

    internal companion object {
        /** Commits after which the engine requests a [WalCheckpointer] checkpoint: about 1,000 pages of WAL. */
        const val CHECKPOINT_EVERY = 256

        /** Opens a connection to [path] with the engine's settings. */
        fun open(path: Path, busyMillis: Int, syncEveryCommit: Boolean): Connection {
            val config = SQLiteConfig().apply {
                setBusyTimeout(busyMillis)
                setSynchronous(
                    if (syncEveryCommit) SQLiteConfig.SynchronousMode.FULL else SQLiteConfig.SynchronousMode.NORMAL,
                )
                enforceForeignKeys(true)
                // Nothing reads generated keys; on, the driver matches every statement against a pattern and runs a
                // `SELECT last_insert_rowid()` after each insert.
                setGetGeneratedKeys(false)
            }
            return DriverManager.getConnection("jdbc:sqlite:${path.toAbsolutePath()}", config.toProperties())
        }
    }

    override fun close() {
        // Closing waits for a running transaction; a coroutine would suspend, but close() is plain, so spin briefly.
        while (!mutex.tryLock()) Thread.onSpinWait()
        try {
            closed = true
            // First: SQLite checkpoints the WAL and deletes it when the last connection to the file closes.
            checkpointer.close()
            statements.values.forEach { it.close() }
            statements.clear()
            connection?.close()
            connection = null
        } finally {
            mutex.unlock()
        }
    }
}
