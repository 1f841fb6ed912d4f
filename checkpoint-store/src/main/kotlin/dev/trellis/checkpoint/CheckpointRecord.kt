package dev.trellis.checkpoint

import java.time.Instant

/**
 * One saved checkpoint of a run: the run's position after a step, as an opaque JSON [payload] the runtime
 * wrote, plus the fields a store needs to order, link and prune checkpoints.
 *
 * Checkpoints of a run are numbered 1, 2, 3… by [sequence] without gaps. [parentSequence] links a checkpoint to
 * the one it continues (`null` for the first checkpoint of a run). A run forked from another run's checkpoint
 * starts at sequence 1 with no parent and names its origin in [forkedFrom]. A [Kind.DELTA] checkpoint stores only
 * the change against its parent, so it always has a parent; a [Kind.FULL] checkpoint stands on its own.
 *
 * The store never reads [payload]; it keeps it byte for byte (any Unicode text except the NUL character, which
 * PostgreSQL cannot store in `text`).
 *
 * ```kotlin
 * val first = CheckpointRecord(
 *     runId = "run-1", sequence = 1, parentSequence = null, graphId = "support-bot", schemaVersion = 1,
 *     createdAt = Instant.now(), status = "RUNNING", kind = CheckpointRecord.Kind.FULL, payload = """{"state":{}}""",
 * )
 * ```
 */
public class CheckpointRecord @JvmOverloads constructor(
    /** The run this checkpoint belongs to. */
    public val runId: String,
    /** Position in the run, starting at 1 and increasing by one per checkpoint. */
    public val sequence: Long,
    /** The checkpoint of the same run this one continues; `null` for the first checkpoint of a run. */
    public val parentSequence: Long?,
    /** Id of the graph that produced the checkpoint. */
    public val graphId: String,
    /** Version of the payload's format, so the runtime can migrate or reject old checkpoints. */
    public val schemaVersion: Int,
    /** When the runtime took the checkpoint. */
    public val createdAt: Instant,
    /** The run's status at this point, for example `RUNNING`, `COMPLETED`, `FAILED`, `INTERRUPTED`, `DRAINED`. */
    public val status: String,
    /** Whether [payload] is a whole snapshot or a change against the parent. */
    public val kind: Kind,
    /** The runtime's JSON text; opaque to the store. */
    public val payload: String,
    /** Free-form string attributes (who resumed the run, which node completed…). */
    metadata: Map<String, String> = emptyMap(),
    /** The checkpoint of another run this run was forked from, on the first checkpoint of a forked run. */
    public val forkedFrom: CheckpointRef? = null,
) {
    /** Free-form string attributes (who resumed the run, which node completed…). */
    public val metadata: Map<String, String> =
        if (metadata.isEmpty()) emptyMap() else java.util.Collections.unmodifiableMap(LinkedHashMap(metadata))

    init {
        require(
            runId.isNotBlank(),
        ) { "A checkpoint needs a run id, but runId is blank; pass the id of the run it belongs to." }
        require(
            sequence >= 1,
        ) { "Checkpoint sequence of run '$runId' is $sequence; sequences start at 1 and grow by one." }
        require(
            graphId.isNotBlank(),
        ) { "Checkpoint $sequence of run '$runId' has a blank graphId; pass the graph's id." }
        require(
            status.isNotBlank(),
        ) { "Checkpoint $sequence of run '$runId' has a blank status; pass the run's status." }
        if (sequence == 1L) {
            require(parentSequence == null) {
                "Checkpoint 1 of run '$runId' names parent $parentSequence, but the first checkpoint of a run has no " +
                    "parent; pass parentSequence = null (and forkedFrom for a fork)."
            }
        } else {
            require(parentSequence == null || parentSequence in 1 until sequence) {
                "Checkpoint $sequence of run '$runId' names parent $parentSequence; a parent must be an earlier " +
                    "checkpoint of the same run (1 until $sequence)."
            }
        }
        require(kind == Kind.FULL || parentSequence != null) {
            "Checkpoint $sequence of run '$runId' is a DELTA without a parent; a delta needs the checkpoint it " +
                "changes, so pass parentSequence or save a FULL checkpoint."
        }
    }

    /** How a checkpoint's payload relates to its parent. */
    public enum class Kind {
        /** A complete snapshot; restoring needs nothing else. */
        FULL,

        /** The change against the parent checkpoint; restoring needs the chain back to a [FULL] checkpoint. */
        DELTA,
    }

    override fun equals(other: Any?): Boolean =
        other is CheckpointRecord &&
            runId == other.runId &&
            sequence == other.sequence &&
            parentSequence == other.parentSequence &&
            graphId == other.graphId &&
            schemaVersion == other.schemaVersion &&
            createdAt == other.createdAt &&
            status == other.status &&
            kind == other.kind &&
            payload == other.payload &&
            metadata == other.metadata &&
            forkedFrom == other.forkedFrom

    override fun hashCode(): Int {
        var result = runId.hashCode()
        result = 31 * result + sequence.hashCode()
        result = 31 * result + (parentSequence?.hashCode() ?: 0)
        result = 31 * result + graphId.hashCode()
        result = 31 * result + schemaVersion
        result = 31 * result + createdAt.hashCode()
        result = 31 * result + status.hashCode()
        result = 31 * result + kind.hashCode()
        result = 31 * result + payload.hashCode()
        result = 31 * result + metadata.hashCode()
        result = 31 * result + (forkedFrom?.hashCode() ?: 0)
        return result
    }

    override fun toString(): String =
        "CheckpointRecord(runId=$runId, sequence=$sequence, parentSequence=$parentSequence, graphId=$graphId, " +
            "schemaVersion=$schemaVersion, createdAt=$createdAt, status=$status, kind=$kind, " +
            "payload=${payload.length} chars, metadata=$metadata, forkedFrom=$forkedFrom)"
}
