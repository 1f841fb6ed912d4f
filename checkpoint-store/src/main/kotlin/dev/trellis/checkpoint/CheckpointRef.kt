package dev.trellis.checkpoint

/**
 * Points at one checkpoint: the [sequence]-th checkpoint of run [runId]. Used by [CheckpointRecord.forkedFrom].
 */
public class CheckpointRef(
    /** The run holding the checkpoint. */
    public val runId: String,
    /** The checkpoint's position in that run. */
    public val sequence: Long,
) {
    init {
        require(runId.isNotBlank()) { "A checkpoint reference needs a run id, but runId is blank." }
        require(
            sequence >= 1,
        ) { "A checkpoint reference to run '$runId' names sequence $sequence; sequences start at 1." }
    }

    override fun equals(other: Any?): Boolean =
        other is CheckpointRef && runId == other.runId && sequence == other.sequence

    override fun hashCode(): Int = 31 * runId.hashCode() + sequence.hashCode()

    override fun toString(): String = "$runId#$sequence"
}
