package dev.trellis.temporal.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.runtime.RemoteEvents
import dev.trellis.temporal.EventKey
import dev.trellis.temporal.LiveEvent
import dev.trellis.temporal.TemporalNodeException
import dev.trellis.temporal.WorkflowTaskId
import kotlinx.serialization.json.jsonObject
import java.sql.Connection
import java.time.Duration

/**
 * The table of `PostgresLiveEvents` (`docs/temporal.md`, "Live events across JVMs"): one row per published event and
 * workflow task, numbered per run in commit order (`pos`), so that a subscriber reads a run's rows in order by keyset
 * (`pos > last`) and never skips one committed late.
 *
 * - A row's identity is the event's key (run, node, execution, attempt, sequence) and its workflow task (`''`/0 for a
 *   payload an activity published): a repeat is not inserted (`ON CONFLICT DO NOTHING`), and an event of a failed
 *   workflow task does not hide the replay's event of the same key (the caller's stream decides which task counts).
 * - `pos` is given under the run's transaction-scoped advisory lock, held until commit: a run's rows commit in `pos`
 *   order, without gaps.
 * - Every insert notifies the channel named after the table with the run id (delivered at commit).
 * - A run's rows are deleted once its terminal event has been in the table for the retention ([prune]).
 */
internal class LiveTable(val name: String) {
    init {
        require(NAME.matches(name)) {
            "Table name '$name' is not a plain (optionally schema-qualified) SQL name: use letters, digits and " +
                "underscores, such as trellis_live_events or my_schema.trellis_live_events."
        }
    }

    /** The channel subscribers `LISTEN` on. */
    val channel: String = name.replace('.', '_')

    fun create(c: Connection) = transaction(c) {
        // Serialized: concurrent CREATE TABLE IF NOT EXISTS of one table can fail on PostgreSQL's catalog.
        c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))").use {
            it.setString(1, "trellis-live-events:$name")
            it.execute()
        }
        c.createStatement().use { s ->
            s.execute(
                """
                CREATE TABLE IF NOT EXISTS $name (
                    run_id TEXT NOT NULL,
                    pos BIGINT NOT NULL,
                    node TEXT NOT NULL,
                    execution INT NOT NULL,
                    attempt INT NOT NULL,
                    seq BIGINT NOT NULL,
                    task_execution TEXT NOT NULL,
                    task_started BIGINT NOT NULL,
                    terminal BOOLEAN NOT NULL,
                    event TEXT NOT NULL,
                    written_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                    PRIMARY KEY (run_id, pos),
                    UNIQUE (run_id, node, execution, attempt, seq, task_execution, task_started)
                )
                """.trimIndent(),
            )
            s.execute("CREATE INDEX IF NOT EXISTS ${channel}_ended ON $name (written_at) WHERE terminal")
        }
    }

    /** Inserts [events] of run [runId], in order, skipping repeats; returns how many were new. */
    fun insert(c: Connection, runId: String, events: List<Pair<LiveEvent, String>>): Int = transaction(c) {
        c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))").use {
            it.setString(1, "trellis-live-run:$name:$runId")
            it.execute()
        }
        var inserted = 0
        c.prepareStatement(
            "INSERT INTO $name (run_id, pos, node, execution, attempt, seq, task_execution, task_started, " +
                "terminal, event) SELECT ?, COALESCE((SELECT max(pos) FROM $name WHERE run_id = ?), 0) + 1, " +
                "?, ?, ?, ?, ?, ?, ?, ? ON CONFLICT (run_id, node, execution, attempt, seq, task_execution, " +
                "task_started) DO NOTHING",
        ).use { insert ->
            for ((live, json) in events) {
                val key = live.key
                insert.setString(1, runId)
                insert.setString(2, runId)
                insert.setString(3, key.node)
                insert.setInt(4, key.execution)
                insert.setInt(5, key.attempt)
                insert.setLong(6, key.sequence)
                insert.setString(7, live.task?.executionRunId ?: "")
                insert.setLong(8, live.task?.startedEventId ?: 0)
                insert.setBoolean(9, live.event.isTerminal)
                insert.setString(10, json)
                inserted += insert.executeUpdate()
            }
        }
        if (inserted > 0) {
            c.prepareStatement("SELECT pg_notify(?, ?)").use {
                it.setString(1, channel)
                it.setString(2, runId)
                it.execute()
            }
        }
        inserted
    }

    /** The rows of run [runId] after position [after], at most [limit], in order: position to event. */
    fun read(c: Connection, runId: String, after: Long, limit: Int, graph: Graph): List<Pair<Long, LiveEvent>> {
        c.autoCommit = true
        return c.prepareStatement(
            "SELECT pos, node, execution, attempt, seq, task_execution, task_started, event FROM $name " +
                "WHERE run_id = ? AND pos > ? ORDER BY pos LIMIT ?",
        ).use { select ->
            select.setString(1, runId)
            select.setLong(2, after)
            select.setInt(3, limit)
            select.executeQuery().use { rs ->
                val rows = ArrayList<Pair<Long, LiveEvent>>()
                while (rs.next()) {
                    val key = EventKey(runId, rs.getString(2), rs.getInt(3), rs.getInt(4), rs.getLong(5))
                    val task = rs.getString(6).takeIf { it.isNotEmpty() }?.let { WorkflowTaskId(it, rs.getLong(7)) }
                    rows += rs.getLong(1) to LiveEvent(key, decode(rs.getString(8), graph), task)
                }
                rows
            }
        }
    }

    /** Deletes the rows of the runs whose terminal event was written more than [retention] ago; returns how many. */
    fun prune(c: Connection, retention: Duration): Int {
        c.autoCommit = true
        return c.prepareStatement(
            "DELETE FROM $name WHERE run_id IN (SELECT run_id FROM $name WHERE terminal AND " +
                "written_at < now() - make_interval(secs => ?))",
        ).use {
            it.setDouble(1, retention.toMillis() / 1000.0)
            it.executeUpdate()
        }
    }

    private inline fun <T> transaction(c: Connection, body: () -> T): T {
        c.autoCommit = false
        try {
            return body().also { c.commit() }
        } catch (e: Throwable) {
            runCatching { c.rollback() }
            throw e
        } finally {
            runCatching { c.autoCommit = true }
        }
    }

    companion object {
        private val NAME = Regex("([A-Za-z_][A-Za-z0-9_]*\\.)?[A-Za-z_][A-Za-z0-9_]*")

        /** [event] as the table holds it: JSON, a node's exception by the type the workflow saw. */
        @OptIn(InternalTrellisApi::class)
        fun encode(event: LiveEvent): String =
            RemoteEvents.encode(event.event) { (it as? TemporalNodeException)?.type ?: it.javaClass.name }.toString()

        @OptIn(InternalTrellisApi::class)
        private fun decode(text: String, graph: Graph) = RemoteEvents.decode(
            Payloads.json.parseToJsonElement(text).jsonObject,
            graph.schema,
            ::TemporalNodeException,
        )
    }
}
