package dev.trellis.checkpoint

import java.time.Instant

/**
 * The right of one [owner] to write checkpoints of one run, as granted by [CheckpointStore.claim].
 *
 * Every claim gives the run a new fencing [epoch]; a store accepts writes only from the lease holding the run's
 * current epoch, so a process that lost its lease (it stalled, another process took over) cannot overwrite newer
 * checkpoints. The lease expires at [expiresAt] unless renewed with [CheckpointStore.renew]; after that, another
 * owner may claim the run.
 */
public class Lease(
    /** The run this lease is for. */
    public val runId: String,
    /** Who holds the lease: an id unique to the process (and to its incarnation, if it restarts). */
    public val owner: String,
    /** The fencing version this lease writes with; it grows by one on every claim of the run. */
    public val epoch: Long,
    /** When the lease lapses unless renewed. */
    public val expiresAt: Instant,
) {
    override fun equals(other: Any?): Boolean =
        other is Lease && runId == other.runId && owner == other.owner && epoch == other.epoch &&
            expiresAt == other.expiresAt

    override fun hashCode(): Int {
        var result = runId.hashCode()
        result = 31 * result + owner.hashCode()
        result = 31 * result + epoch.hashCode()
        result = 31 * result + expiresAt.hashCode()
        return result
    }

    override fun toString(): String = "Lease(runId=$runId, owner=$owner, epoch=$epoch, expiresAt=$expiresAt)"
}
