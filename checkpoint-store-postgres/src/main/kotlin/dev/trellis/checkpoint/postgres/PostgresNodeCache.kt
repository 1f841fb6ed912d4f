package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.NodeCache
import dev.trellis.checkpoint.jdbc.JdbcNodeCache
import dev.trellis.checkpoint.postgres.internal.PostgresEngine
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import java.time.Duration
import javax.sql.DataSource

/**
 * A [NodeCache] in PostgreSQL (`docs/semantics.md` §13.5), usually in the checkpoints' [schema]: its table
 * `trellis_node_cache` is created there with the checkpoint tables, by the same migrations under the same advisory
 * lock. Every worker on the database shares the entries. Connections come from [dataSource] one per operation
 * (use a pool); each transaction is bounded by [lockTimeout] and [statementTimeout] like the checkpoint store's, and
 * a cancelled caller cancels its statement.
 *
 * ```kotlin
 * val cache = PostgresNodeCache(dataSource)
 * graph.invoke(input, RunOptions(cache = cache))
 * ```
 *
 * @param dataSource where connections come from; the cache does not close it.
 * @param schema the schema holding the table: lower-case letters, digits and underscores.
 * @param dispatcher where blocking JDBC calls run.
 */
public class PostgresNodeCache private constructor(
    private val schema: String,
    delegate: JdbcNodeCache,
) : NodeCache by delegate {
    @JvmOverloads
    public constructor(
        dataSource: DataSource,
        schema: String = "trellis",
        dispatcher: CoroutineDispatcher = Dispatchers.IO,
        lockTimeout: Duration = PostgresCheckpointStore.DEFAULT_LOCK_TIMEOUT,
        statementTimeout: Duration = PostgresCheckpointStore.DEFAULT_STATEMENT_TIMEOUT,
    ) : this(schema, JdbcNodeCache(PostgresEngine(dataSource, schema, dispatcher, lockTimeout, statementTimeout)))

    override fun toString(): String = "PostgresNodeCache(schema=$schema)"
}
