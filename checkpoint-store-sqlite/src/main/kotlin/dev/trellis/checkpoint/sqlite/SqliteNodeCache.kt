package dev.trellis.checkpoint.sqlite

import dev.trellis.checkpoint.NodeCache
import dev.trellis.checkpoint.jdbc.JdbcNodeCache
import dev.trellis.checkpoint.sqlite.internal.SqliteEngine
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import java.nio.file.Path
import java.time.Duration

/**
 * A [NodeCache] in a SQLite file (`docs/semantics.md` §13.5), usually the checkpoints' file: its table
 * `trellis_node_cache` is created next to the checkpoint tables, by the same migrations, on first use. Entries
 * survive the process: a new cache on the same file (in this JVM or another) finds them. Like
 * [SqliteCheckpointStore], it holds one connection (WAL mode, `BEGIN IMMEDIATE`), and another for the WAL's
 * checkpoints, and runs its JDBC calls on [dispatcher]; close it when done.
 *
 * ```kotlin
 * val cache = SqliteNodeCache(Path.of("trellis.db"))
 * graph.invoke(input, RunOptions(cache = cache, checkpointing = Checkpointing(SqliteCheckpointStore(Path.of("trellis.db")))))
 * ```
 *
 * @param path the database file; created with its parent directories if missing.
 * @param busyTimeout how long a write waits for another connection's write lock before failing.
 * @param dispatcher where blocking JDBC calls run.
 */
public class SqliteNodeCache private constructor(
    private val path: Path,
    delegate: JdbcNodeCache,
) : NodeCache by delegate {
    @JvmOverloads
    public constructor(
        path: Path,
        busyTimeout: Duration = Duration.ofSeconds(10),
        dispatcher: CoroutineDispatcher = Dispatchers.IO,
    ) : this(path, JdbcNodeCache(SqliteEngine(path, dispatcher, busyTimeout)))

    override fun toString(): String = "SqliteNodeCache($path)"
}
