package dev.trellis.temporal

import dev.trellis.graph.Graph
import dev.trellis.temporal.internal.LiveListener
import dev.trellis.temporal.internal.LiveTable
import dev.trellis.temporal.internal.LiveWriter
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.runInterruptible
import kotlinx.coroutines.withTimeoutOrNull
import java.time.Duration
import javax.sql.DataSource

/**
 * [LiveEvents] across JVMs, through a PostgreSQL table (`docs/temporal.md`, "Live events across JVMs"): workers
 * publish the runs' events to it, callers in any JVM stream them. Give one to every worker
 * ([TemporalOptions.liveEvents]) and to the runner, each on the same database and [table].
 *
 * - **Publish** never blocks nor throws: the event is queued (at most [capacity]; beyond, it is dropped and counted
 *   in [dropped]) and a background thread writes the queue in batches as JSON (`RemoteEvents.encode`: states by
 *   their keys' serializers, payloads as their `toString()`, exceptions as type and message), retrying while the
 *   database refuses. A repeat — same key and workflow task — is not written again (`ON CONFLICT DO NOTHING`).
 * - **Subscribe** reads a run's rows in the order they were committed, from its first: at once, then on each
 *   `NOTIFY` of the run, and every [pollInterval] in case a notification was missed. A late subscriber gets the
 *   whole run, as long as it was not pruned.
 * - **Pruning**: a run's rows are deleted once its terminal event has been in the table for [retention] (one hour by
 *   default); each publisher's writer prunes at most once a minute, and [prune] prunes now.
 *
 * The table is created when missing. Needs the PostgreSQL JDBC driver (`org.postgresql:postgresql`, an optional
 * dependency of trellis-temporal). [close] writes what is queued (for up to 10 seconds) and stops the threads.
 */
public class PostgresLiveEvents @JvmOverloads constructor(
    private val dataSource: DataSource,
    /** The table (optionally schema-qualified); its `NOTIFY` channel is its name with `_` for `.`. */
    table: String = "trellis_live_events",
    /** How long a run's rows stay after its terminal event was written. */
    private val retention: Duration = Duration.ofHours(1),
    /** How many events may wait to be written; beyond, [publish] drops them. */
    capacity: Int = 10_000,
    /** How often a subscriber reads the table without a notification. */
    private val pollInterval: Duration = Duration.ofSeconds(1),
) : LiveEvents, AutoCloseable {
    private val table = LiveTable(table)
    private val writer: LiveWriter
    private val listener = LiveListener(dataSource, this.table.channel)

    init {
        require(capacity > 0) { "capacity must be positive, but was $capacity." }
        require(!retention.isNegative) { "retention must not be negative, but was $retention." }
        require(!pollInterval.isNegative && !pollInterval.isZero) { "pollInterval must be positive." }
        dataSource.connection.use { this.table.create(it) }
        writer = LiveWriter(dataSource, this.table, capacity, retention, PRUNE_EVERY)
        writer.start()
    }

    /** How many events [publish] dropped: the queue was full, or the event could not be encoded. */
    public val dropped: Long get() = writer.dropped.get()

    override fun publish(event: LiveEvent) {
        writer.offer(event)
    }

    override fun subscribe(runId: String, graph: Graph): Flow<LiveEvent> = flow {
        val signal = listener.watch(runId)
        try {
            var last = 0L
            while (true) {
                val seen = signal.value
                val rows = runInterruptible(Dispatchers.IO) {
                    dataSource.connection.use { table.read(it, runId, last, READ_BATCH, graph) }
                }
                for ((pos, event) in rows) {
                    emit(event)
                    last = pos
                }
                if (rows.size == READ_BATCH) continue
                withTimeoutOrNull(pollInterval.toMillis()) { signal.first { it != seen } }
            }
        } finally {
            listener.unwatch(runId)
        }
    }

    /**
     * Waits until the events published so far are written, at most [timeout]; false when time ran out (the database
     * is away, say).
     */
    public fun flush(timeout: Duration): Boolean = writer.flush(timeout)

    /** Deletes the rows of the runs that ended more than [retention] ago, now; returns how many rows. */
    public fun prune(): Int = dataSource.connection.use { table.prune(it, retention) }

    /** Writes what is queued (for up to 10 seconds) and stops the writer and the listener. */
    override fun close() {
        writer.close(CLOSE_FLUSH)
        listener.close()
    }

    private companion object {
        const val READ_BATCH = 500
        val PRUNE_EVERY: Duration = Duration.ofMinutes(1)
        val CLOSE_FLUSH: Duration = Duration.ofSeconds(10)
    }
}
