package dev.trellis.checkpoint.postgres

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.jdbc.JdbcCheckpointStore
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
 * transaction, so two workers never both write a run. Connections come from [dataSource] (use a pool in
 * production) one per operation, and are returned at once; JDBC calls run on [dispatcher].
 *
 * ```kotlin
 * val dataSource = PGSimpleDataSource().apply { setURL("jdbc:postgresql://db:5432/app?user=trellis") }
 * val store = PostgresCheckpointStore(dataSource)
 * ```
 *
 * @param dataSource where connections come from; the store does not close it.
 * @param schema the schema holding the tables: lower-case letters, digits and underscores.
 * @param clock the time source for lease expiry (the store's clock, not the database's; keep workers' clocks in sync).
 * @param leaseDuration how long a claim or renewal lasts.
 * @param dispatcher where blocking JDBC calls run.
 */
public class PostgresCheckpointStore private constructor(
    private val schema: String,
    delegate: JdbcCheckpointStore,
) : CheckpointStore by delegate {
    @JvmOverloads
    public constructor(
        dataSource: DataSource,
        schema: String = "trellis",
        clock: Clock = Clock.systemUTC(),
        leaseDuration: Duration = Duration.ofSeconds(30),
        dispatcher: CoroutineDispatcher = Dispatchers.IO,
    ) : this(schema, JdbcCheckpointStore(PostgresEngine(dataSource, schema, dispatcher), clock, leaseDuration))

    override fun toString(): String = "PostgresCheckpointStore(schema=$schema)"
}
