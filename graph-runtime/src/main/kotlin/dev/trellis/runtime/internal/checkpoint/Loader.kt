package dev.trellis.runtime.internal.checkpoint

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.UnreadableCheckpointException
import dev.trellis.graph.Graph
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.StateMigration

/** Reads checkpoint [sequence] of [runId] (the latest when null) with the chain it depends on. */
internal suspend fun loadRecord(
    graph: Graph,
    store: CheckpointStore,
    runId: String,
    sequence: Long?,
    migrations: List<StateMigration>,
): Pair<CheckpointRecord, Restored> {
    val target = readable(runId) { if (sequence == null) store.latest(runId) else store.get(runId, sequence) }
        ?: throw NoSuchElementException(
            if (sequence == null) {
                "The store has no checkpoint of run '$runId'; check the run id (store.runs() lists the runs it has)."
            } else {
                "The store has no checkpoint $sequence of run '$runId' (it may have been pruned); graph.checkpoints(store, \"$runId\") lists them."
            },
        )
    val chain = ArrayDeque<Pair<Envelope, PositionData>>()
    var record: CheckpointRecord = target
    while (true) {
        val where = "checkpoint ${record.sequence} of run '$runId'"
        if (record.graphId != graph.id) {
            throw CheckpointFormatException(
                "The $where belongs to graph '${record.graphId}', not to graph '${graph.id}'.",
            )
        }
        chain.addFirst(PositionCodec.unwrap(graph, record.payload, where))
        if (record.kind == CheckpointRecord.Kind.FULL) break
        val parent = record.parentSequence ?: throw CheckpointFormatException("The $where is a delta without a parent.")
        record = readable(runId) { store.get(runId, parent) } ?: throw CheckpointFormatException(
            "The $where is a delta whose parent checkpoint $parent is missing (pruned?); the run cannot be restored from it.",
        )
    }
    return target to PositionCodec.restore(graph, chain, migrations, "checkpoint ${target.sequence} of run '$runId'")
}

/** Reads a record; a stored row that cannot be decoded fails as a [CheckpointFormatException] naming run and sequence. */
private inline fun readable(runId: String, read: () -> CheckpointRecord?): CheckpointRecord? = try {
    read()
} catch (e: UnreadableCheckpointException) {
    throw CheckpointFormatException(
        "Checkpoint ${e.sequence} of run '$runId' cannot be loaded: ${e.message}",
        e,
    )
}
