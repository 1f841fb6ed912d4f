package dev.trellis.checkpoint.sqlite

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.jdbc.JdbcCheckpointStore
import dev.trellis.checkpoint.jdbc.TransientFaults
import dev.trellis.checkpoint.sqlite.internal.SqliteEngine
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import java.nio.file.Path
import java.time.Clock
import java.time.Duration

/**
 * A [CheckpointStore] in one SQLite file: the embedded default, durable across restarts with nothing to install.
 *
 * The tables (`trellis_runs`, `trellis_checkpoints`, `trellis_schema_version`) are created on first use. The file
 * is opened in WAL mode with a busy timeout, so several stores — in this JVM or in other processes — may share it:
 * every write transaction takes the file's write lock first (`BEGIN IMMEDIATE`), which makes a claim or an append
 * atomic across processes. Each store holds one connection and runs its JDBC calls on [dispatcher], but for a
 * claim, append, release or `latest` read that waits for nothing (the connection is free, the file's write lock is
 * free, and `syncEveryCommit` is off): that one runs on the caller's thread, which saves a hop to [dispatcher] and
 * back per call.
 *
 * The WAL is checkpointed (its pages copied into the database file) on [dispatcher] through a second connection,
 * every 256 commits, instead of inside the commit that crosses SQLite's threshold; once the WAL has reached 2,000
 * pages, the store's own connection does a short final checkpoint right after a commit so that the WAL starts
 * afresh (`docs/persistence-stores.md`, "SQLite's WAL and its checkpoints"). Durability is unchanged; the WAL file
 * grows larger than SQLite's default 4 MB (8 MB plus what is committed during one checkpoint) until the last
 * connection to the file closes.
 *
 * ```kotlin
 * SqliteCheckpointStore(Path.of("build/trellis.db")).use { store ->
 *     val lease = store.claim("run-1", owner = "worker-a")
 *     store.append(lease, record)
 * }
 * ```
 *
 * @param path the database file; created with its parent directories if missing.
 * @param clock the time source for lease expiry.
 * @param leaseDuration how long a claim or renewal lasts.
 * @param busyTimeout how long one attempt of a write waits for another connection's write lock on the file.
 * @param unavailableAfter how long an operation keeps trying while the file stays locked (SQLITE_BUSY after
 *   [busyTimeout], SQLITE_LOCKED) before it throws [dev.trellis.checkpoint.CheckpointStoreUnavailableException]
 *   naming the run and the file: a writer frozen inside a transaction (SIGSTOP) blocks a claim at most about
 *   this long plus one [busyTimeout]. See `docs/persistence.md`, "The fault model".
 * @param dispatcher where blocking JDBC calls run (every call that may wait: opening, reads, claims, appends and
 *   releases that find the connection or the file's write lock taken), and the WAL checkpoints.
 * @param syncEveryCommit whether every commit waits for the disk (`synchronous=FULL`). By default (`NORMAL`, safe
 *   in WAL mode) a committed checkpoint survives a crash or kill of the process; after a power loss or an OS crash
 *   the last few commits may be lost, never corrupted. Set it for durability against power loss, at the cost of an
 *   `fsync` (milliseconds on many disks) per checkpoint.
 */
public class SqliteCheckpointStore private constructor(
    private val path: Path,
    delegate: JdbcCheckpointStore,
) : CheckpointStore by delegate {
    @JvmOverloads
    public constructor(
        path: Path,
        clock: Clock = Clock.systemUTC(),
        leaseDuration: Duration = Duration.ofSeconds(30),
        busyTimeout: Duration = Duration.ofSeconds(10),
        dispatcher: CoroutineDispatcher = Dispatchers.IO,
        syncEveryCommit: Boolean = false,
        unavailableAfter: Duration = TransientFaults.DEFAULT_UNAVAILABLE_AFTER,
    ) : this(
        path,
        JdbcCheckpointStore(
            SqliteEngine(path, dispatcher, busyTimeout, syncEveryCommit),
            clock,
            leaseDuration,
            unavailableAfter = unavailableAfter,
        ),
    )

    override fun toString(): String = "SqliteCheckpointStore($path)"
}
