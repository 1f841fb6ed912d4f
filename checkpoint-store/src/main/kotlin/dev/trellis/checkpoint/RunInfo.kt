package dev.trellis.checkpoint

import java.time.Instant

/**
 * A summary of one run known to a [CheckpointStore], as listed by [CheckpointStore.runs].
 */
public class RunInfo @JvmOverloads constructor(
    /** The run's id. */
    public val runId: String,
    /** The graph of the latest checkpoint, or `null` while the run has none. */
    public val graphId: String?,
    /** The owner of the current lease, or `null` when the run was released or never claimed. */
    public val owner: String?,
    /** When the current lease lapses, or `null` when nobody holds it. */
    public val leaseExpiresAt: Instant?,
    /** The run's current fencing version (0 before the first claim). */
    public val epoch: Long,
    /** The sequence of the latest checkpoint, 0 while the run has none. */
    public val latestSequence: Long,
    /** The status recorded with the latest checkpoint, or `null` while the run has none. */
    public val latestStatus: String?,
    /**
     * When the store first recorded the run (its first claim), by the store's clock; `null` when unknown (a run
     * recorded before the store kept this). [RunQuery.Order.NEWEST_FIRST] lists by it.
     */
    public val createdAt: Instant? = null,
) {
    override fun equals(other: Any?): Boolean =
        other is RunInfo && runId == other.runId && graphId == other.graphId && owner == other.owner &&
            leaseExpiresAt == other.leaseExpiresAt && epoch == other.epoch &&
            latestSequence == other.latestSequence && latestStatus == other.latestStatus && createdAt == other.createdAt

    override fun hashCode(): Int {
        var result = runId.hashCode()
        result = 31 * result + (graphId?.hashCode() ?: 0)
        result = 31 * result + (owner?.hashCode() ?: 0)
        result = 31 * result + (leaseExpiresAt?.hashCode() ?: 0)
        result = 31 * result + epoch.hashCode()
        result = 31 * result + latestSequence.hashCode()
        result = 31 * result + (latestStatus?.hashCode() ?: 0)
        result = 31 * result + (createdAt?.hashCode() ?: 0)
        return result
    }

    override fun toString(): String =
        "RunInfo(runId=$runId, graphId=$graphId, owner=$owner, leaseExpiresAt=$leaseExpiresAt, epoch=$epoch, " +
            "latestSequence=$latestSequence, latestStatus=$latestStatus, createdAt=$createdAt)"
}
