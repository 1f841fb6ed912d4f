package dev.trellis.fleet.internal

import dev.trellis.checkpoint.Lease
import java.sql.Connection
import java.time.Instant

/**
 * The checkpoint store's lease rows (`PostgresCheckpointStore`'s `trellis_runs` in the same schema), written inside
 * the queue's transactions so that a run costs fewer commits: the worker's claim of a run in the queue also claims
 * its store lease, and the recorded end also releases it. The rules are the store's own: a lease is granted when the
 * run has no owner, the same owner, or an expired lease (by the database's clock), and each grant starts a new
 * fencing epoch; a release is fenced by the epoch and the owner.
 */
internal class StoreLeases(schema: String) {
    private val runs = "$schema.trellis_runs"

    /** A store lease granted with a queue claim; [empty] when the run has no checkpoint yet. */
    class Granted(val lease: Lease, val empty: Boolean)

    /**
     * Claims the store leases of [runIds] for [owner] for [leaseMillis], in [c]'s transaction, in run id order (the
     * order the store's group commit locks rows in). A run whose lease another owner still holds is left out: its
     * run claims it through the store as usual, and waits for it.
     */
    fun claim(c: Connection, runIds: List<String>, owner: String, leaseMillis: Long): Map<String, Granted> {
        if (runIds.isEmpty()) return emptyMap()
        val now = c.prepareStatement(NOW_MILLIS).use { s ->
            s.executeQuery().use {
                it.next()
                it.getLong(1)
            }
        }
        val until = now + leaseMillis
        return c.prepareStatement(
            "INSERT INTO $runs AS s (run_id, epoch, latest_sequence, owner, lease_until, created_at) " +
                "SELECT id, 1, 0, ?, ?, ? FROM unnest(?::text[]) AS t(id) ORDER BY id " +
                "ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until, " +
                "epoch = s.epoch + 1 " +
                "WHERE s.owner IS NULL OR s.owner = excluded.owner OR s.lease_until IS NULL OR s.lease_until <= ? " +
                "RETURNING s.run_id, s.epoch, s.latest_sequence",
        ).use { statement ->
            statement.setString(1, owner)
            statement.setLong(2, until)
            statement.setLong(3, now)
            statement.setArray(4, c.createArrayOf("text", runIds.sorted().toTypedArray()))
            statement.setLong(5, now)
            statement.executeQuery().use { rs ->
                buildMap {
                    while (rs.next()) {
                        val runId = rs.getString(1)
                        val lease = Lease(runId, owner, rs.getLong(2), Instant.ofEpochMilli(until))
                        put(runId, Granted(lease, empty = rs.getLong(3) == 0L))
                    }
                }
            }
        }
    }

    /** Releases [lease] in [c]'s transaction, if it still holds the run (`CheckpointStore.release`). */
    fun release(c: Connection, lease: Lease) {
        c.prepareStatement(
            "UPDATE $runs SET owner = NULL, lease_until = NULL WHERE run_id = ? AND epoch = ? AND owner = ?",
        ).use {
            it.setString(1, lease.runId)
            it.setLong(2, lease.epoch)
            it.setString(3, lease.owner)
            it.executeUpdate()
        }
    }

    private companion object {
        const val NOW_MILLIS = "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"
    }
}
