package dev.trellis.checkpoint.sqlite.internal

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import java.sql.Connection
import java.sql.SQLException
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock

/**
 * Checkpoints the WAL of a SQLite file (copies its committed pages into the database file and syncs both) on
 * [dispatcher], through a connection of its own, so that commits do not wait for the bulk of it.
 *
 * SQLite's automatic checkpoint runs inside the commit that crosses its threshold: that commit waits for the WAL's
 * `fsync`, the copy of every changed page and the database file's `fsync` — milliseconds, about as long again as
 * all the appends since the previous checkpoint together. [request] starts the same `PASSIVE` checkpoint (it never
 * waits for other connections' readers or writers, and they never wait for it) here instead, at most one at a time;
 * the engine requests one every [SqliteEngine.CHECKPOINT_EVERY] commits.
 *
 * A checkpoint that runs beside a writer ends behind it (it copies the frames that were in the WAL when it began),
 * and SQLite starts the WAL afresh only when a write begins with every frame copied. So once the WAL holds
 * [RESTART_FRAMES] frames, this checkpointer copies what came in meanwhile (again, up to [MAX_PASSES] times, until
 * little came in), then stops and leaves the next checkpoint to the writer's own connection, right after a commit
 * ([catchUpWanted], [SqliteEngine]): it copies only what was committed since, and the next write starts the WAL from
 * its beginning again. The WAL file thus stays below about [RESTART_FRAMES] pages plus what
 * is committed during one checkpoint.
 *
 * What a commit guarantees is unchanged: it is in the WAL when it returns (and on disk too with
 * `synchronous=FULL`); a checkpoint only moves committed pages, with the same syncs as SQLite's own. A checkpoint
 * that fails (the file cannot be opened, say) is left to the next request, and to SQLite's automatic checkpoint,
 * which the engine keeps as a backstop at a higher threshold.
 */
internal class WalCheckpointer(
    private val open: () -> Connection,
    dispatcher: CoroutineDispatcher,
) : AutoCloseable {
    private val scope = CoroutineScope(SupervisorJob() + dispatcher + CoroutineName("trellis-sqlite-wal-checkpoint"))
    private val running = AtomicBoolean(false)

    /** Held while a checkpoint runs and while [close] closes [connection]. */
    private val lock = ReentrantLock()
    private var connection: Connection? = null
    private var closed = false

    /**
     * Set when a checkpoint found [RESTART_FRAMES] frames or more in the WAL: the writer's connection checkpoints
     * next (and clears it); no request runs meanwhile, so that nothing here holds the checkpoint lock then.
     */
    @Volatile
    var catchUpWanted = false

    /** Starts a checkpoint on the dispatcher unless one is running or [catchUpWanted]; returns at once. */
    fun request() {
        if (catchUpWanted || !running.compareAndSet(false, true)) return
        scope.launch {
            try {
                lock.withLock { if (!closed) checkpoint() }
            } finally {
                running.set(false)
            }
        }
    }

    private fun checkpoint() {
        try {
            val c = connection ?: open().also { connection = it }
            var walFrames = passive(c)
            if (walFrames < RESTART_FRAMES) return
            // Copies what was committed during the previous pass, until that is little: the writer's own
            // checkpoint then has little left to copy.
            for (pass in 2..MAX_PASSES) {
                val before = walFrames
                walFrames = passive(c)
                // Fewer frames than before: a write found every frame copied and started the WAL afresh.
                if (walFrames < before) return
                if (walFrames - before <= CATCH_UP_FRAMES) break
            }
            catchUpWanted = true
        } catch (_: SQLException) {
            // Left to the next request and to SQLite's automatic checkpoint; the connection is opened afresh.
            closeConnection()
        }
    }

    /** Runs a `PASSIVE` checkpoint on [c]; returns the frames the WAL held. */
    private fun passive(c: Connection): Int = c.createStatement().use { statement ->
        // One row: whether it was blocked, the frames in the WAL, the frames copied.
        statement.executeQuery("PRAGMA wal_checkpoint(PASSIVE)").use { if (it.next()) it.getInt(2) else 0 }
    }

    private fun closeConnection() {
        try {
            connection?.close()
        } catch (_: SQLException) {
            // Nothing was written through it.
        }
        connection = null
    }

    companion object {
        /** The WAL size, in frames (pages), from which the writer's connection does the next checkpoint: 8 MB. */
        const val RESTART_FRAMES = 2000

        /** The most checkpoints in a row before the writer's; each copies what came in during the one before. */
        private const val MAX_PASSES = 4

        /** Frames committed during a checkpoint few enough to leave to the writer's: about 16 appends. */
        private const val CATCH_UP_FRAMES = 64
    }

    /** Waits for a running checkpoint, then closes the connection; later requests do nothing. */
    override fun close() {
        lock.withLock {
            closed = true
            closeConnection()
        }
        scope.cancel()
    }
}
