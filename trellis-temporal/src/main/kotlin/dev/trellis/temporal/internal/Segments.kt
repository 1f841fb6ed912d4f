package dev.trellis.temporal.internal

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunInfo
import dev.trellis.runtime.Checkpointing
import dev.trellis.temporal.TemporalOptions
import io.temporal.workflow.Workflow
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import java.time.Instant

/*
 * Continue-as-new (`docs/temporal.md`, "Continue-as-new"): a run whose workflow history grew past
 * `TemporalOptions.continueAsNewAfterEvents` (or whose history Temporal suggests to close) is drained — its running
 * nodes finish, no other starts — and saves its position as one checkpoint into its [SegmentStore]; the workflow then
 * continues as new with that checkpoint and what the caller sees of the run so far ([Carried]), and the new execution
 * resumes the run from it. Each workflow execution of a run is a segment of it.
 */

/** Whether this workflow execution's history is long enough for the run to continue as new. */
internal fun historyFull(options: TemporalOptions): Boolean {
    val info = Workflow.getInfo()
    return info.historyLength >= options.continueAsNewAfterEvents || info.isContinueAsNewSuggested
}

/** How a segment checkpoints: only when it ends (drained, or at the run's end), each checkpoint whole. */
internal fun segmentCheckpointing(store: SegmentStore): Checkpointing =
    Checkpointing(store, Checkpointing.Mode.ON_EXIT, owner = "trellis-temporal", fullSnapshotEvery = 1)

/**
 * What a segment hands the next: the graph [version] it runs, the drained run's [checkpoint], the sequence number of
 * the run's next event ([sequence], also the count of events so far), the last event of each node path, and the
 * attempts each node made in earlier segments (a resumed run counts its own only).
 */
internal class Carried(
    val version: Int,
    val checkpoint: CheckpointRecord,
    val sequence: Long,
    val lastEvent: Map<String, String>,
    val attempts: Map<String, Int>,
) {
    fun encode(): JsonObject = JsonObject(
        mapOf(
            "version" to JsonPrimitive(version),
            "checkpoint" to JsonObject(
                mapOf(
                    "graph" to JsonPrimitive(checkpoint.graphId),
                    "schemaVersion" to JsonPrimitive(checkpoint.schemaVersion),
                    "createdAt" to JsonPrimitive(checkpoint.createdAt.toString()),
                    "status" to JsonPrimitive(checkpoint.status),
                    "payload" to JsonPrimitive(checkpoint.payload),
                ),
            ),
            "sequence" to JsonPrimitive(sequence),
            "nodes" to JsonObject(lastEvent.mapValues { JsonPrimitive(it.value) }),
            "attempts" to JsonObject(attempts.mapValues { JsonPrimitive(it.value) }),
        ),
    )

    companion object {
        fun decode(runId: String, json: JsonElement): Carried {
            val obj = json.jsonObject
            val cp = obj.getValue("checkpoint").jsonObject
            val record = CheckpointRecord(
                runId = runId,
                sequence = 1,
                parentSequence = null,
                graphId = cp.getValue("graph").jsonPrimitive.content,
                schemaVersion = cp.getValue("schemaVersion").jsonPrimitive.int,
                createdAt = Instant.parse(cp.getValue("createdAt").jsonPrimitive.content),
                status = cp.getValue("status").jsonPrimitive.content,
                kind = CheckpointRecord.Kind.FULL,
                payload = cp.getValue("payload").jsonPrimitive.content,
            )
            return Carried(
                obj.getValue("version").jsonPrimitive.int,
                record,
                obj.getValue("sequence").jsonPrimitive.long,
                obj.getValue("nodes").jsonObject.mapValues { it.value.jsonPrimitive.content },
                obj.getValue("attempts").jsonObject.mapValues { it.value.jsonPrimitive.int },
            )
        }
    }
}

/**
 * The checkpoint store of one segment of one run, in workflow memory: the checkpoint the segment resumes from
 * ([seed]) and the one it saves when it ends. One writer (the workflow thread), no clock, no I/O: Temporal's
 * history, not this store, makes the run durable.
 */
internal class SegmentStore(private val runId: String) : CheckpointStore {
    private val records = ArrayList<CheckpointRecord>()
    private var epoch = 0L

    /** Puts the checkpoint the segment resumes from. */
    fun seed(record: CheckpointRecord) {
        records += record
    }

    /** The last checkpoint saved: the drained run's, whole ([segmentCheckpointing] saves full ones only). */
    fun last(): CheckpointRecord {
        val record = records.lastOrNull() ?: error("Run '$runId' drained without saving a checkpoint.")
        check(record.kind == CheckpointRecord.Kind.FULL) { "Run '$runId' saved a delta checkpoint when it drained." }
        return record
    }

    override suspend fun claim(runId: String, owner: String): Lease = Lease(runId, owner, ++epoch, FOREVER)

    override suspend fun renew(lease: Lease): Lease = lease

    override suspend fun release(lease: Lease) {}

    override suspend fun append(lease: Lease, record: CheckpointRecord) {
        records += record
    }

    override suspend fun latest(runId: String): CheckpointRecord? = records.lastOrNull()?.takeIf { runId == this.runId }

    override suspend fun get(runId: String, sequence: Long): CheckpointRecord? =
        records.lastOrNull { it.sequence == sequence && runId == this.runId }

    override suspend fun history(runId: String): List<CheckpointRecord> =
        if (runId == this.runId) records.toList() else emptyList()

    override suspend fun runs(): List<RunInfo> {
        val last = records.lastOrNull() ?: return emptyList()
        return listOf(RunInfo(runId, last.graphId, null, null, epoch, last.sequence, last.status))
    }

    override suspend fun prune(runId: String, keepLatest: Int): Int = 0

    override suspend fun delete(runId: String) {
        if (runId == this.runId) records.clear()
    }

    private companion object {
        /** A segment's lease never lapses: nobody else writes its store. */
        val FOREVER: Instant = Instant.parse("9999-12-31T00:00:00Z")
    }
}
