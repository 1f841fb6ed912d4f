package dev.trellis.runtime.internal.checkpoint

import dev.trellis.graph.TaskError
import kotlinx.serialization.KSerializer
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject

/** The JSON envelope of every snapshot and checkpoint payload (format of seed 003). */
@Serializable
internal class Envelope(
    val scope: String,
    val schemaVersion: Int,
    val createdAt: String,
    val appData: JsonObject = JsonObject(emptyMap()),
    val data: JsonElement,
)

/**
 * A run's position as stored: the whole of it ([state] set) or what changed since the previous checkpoint
 * ([writes], and only the changed [versions], [lastWriters] and [nodes]). The frontier (triggers, ready
 * nodes, interrupts) is small and always complete.
 */
@Serializable
internal class PositionData(
    val graphId: String,
    val runId: String,
    val status: String,
    val stateSchema: String,
    val stateVersion: Int,
    val state: Map<String, JsonElement>? = null,
    val writes: List<WriteData> = emptyList(),
    val versions: Map<String, Long> = emptyMap(),
    val lastWriters: Map<String, String> = emptyMap(),
    val version: Long,
    val nodes: Map<String, NodeData> = emptyMap(),
    val triggers: List<TriggerData> = emptyList(),
    /** Written by the first checkpoint format (trigger stamps); read and ignored. */
    val nextStamp: Long = 0,
    val ready: List<String> = emptyList(),
    val totalExecutions: Int,
    val interrupts: List<InterruptData> = emptyList(),
    val errors: List<String> = emptyList(),
    /**
     * The child runs and map tasks of composite nodes (`docs/persistence.md`, nested checkpoints), by key
     * (`research#2`, `summarize#1[3]`): in a full position all of those in flight, in a delta what changed.
     */
    val children: Map<String, ChildData> = emptyMap(),
    /** Whether this record only carries [children]: the position of the run itself is the previous record's. */
    val childrenOnly: Boolean = false,
    /**
     * The run's meter totals (exact decimal text) by meter, complete in every record; absent before budgets existed
     * (`docs/semantics.md` §13.4).
     */
    val meters: Map<String, String> = emptyMap(),
    /** The time the run spent running up to this checkpoint, when its budget has a wall time or it was restored so. */
    val spentNanos: Long = 0,
    /**
     * The completed executions to compensate if the run fails (`docs/semantics.md` §13.6), in completion order: in a
     * full position all of them, in a delta those completed since the previous record.
     */
    val compensable: List<CompensableData> = emptyList(),
    /** The compensations' outcomes so far, in the order run, once the failed run compensates; else null. */
    val compensations: List<OutcomeData>? = null,
)

/** A completed execution to compensate: node, execution number, path and the state values it saw. */
@Serializable
internal class CompensableData(
    val node: String,
    val execution: Int,
    val path: String,
    val state: Map<String, JsonElement> = emptyMap(),
)

/** The outcome of one compensation: COMPLETED, FAILED (with [error]), CANCELLED, or STARTED (no end recorded). */
@Serializable
internal class OutcomeData(val path: String, val execution: Int, val status: String, val error: String? = null)

/**
 * What a checkpoint holds of one child run or map task, or a patch of it in a delta ([plus] folds a patch in):
 * [chain] is the child run's own checkpoints since its last full one (envelopes as JSON text, oldest first);
 * [items] the list a map node runs over; [done] and [writes] a map task that completed; [error] one that failed
 * (collected).
 */
@Serializable
internal class ChildData(
    val chain: List<String> = emptyList(),
    val reset: Boolean = false,
    val items: JsonElement? = null,
    val done: Boolean = false,
    val writes: List<WriteData> = emptyList(),
    @Serializable(with = TaskErrorData::class)
    val error: TaskError? = null,
    /** What a finished map task charged (exact decimal text), counted again toward its map when the run resumes. */
    val meters: Map<String, String> = emptyMap(),
    /** The compensable executions of a completed map task's child run (`docs/semantics.md` §13.6). */
    val compensable: List<CompensableData> = emptyList(),
) {
    /** This entry with [patch] applied: a reset patch replaces it, others extend its chain and set what they set. */
    operator fun plus(patch: ChildData): ChildData = if (patch.reset) {
        patch
    } else {
        ChildData(
            chain = chain + patch.chain,
            items = patch.items ?: items,
            done = done || patch.done,
            writes = if (patch.done) patch.writes else writes,
            error = patch.error ?: error,
            meters = if (patch.done || patch.error != null) patch.meters else meters,
            compensable = if (patch.done) patch.compensable else compensable,
        )
    }
}

@Serializable
internal class WriteData(val key: String, val value: JsonElement)

@Serializable
internal class NodeData(val count: Int, val status: String)

/**
 * [tokens] waiting on the input channel from node [from] to node [node]; [stamp] orders the nodes by when they came
 * to hold a trigger. The first format stored neither [from] nor [tokens]: such a trigger is one token on the node's
 * first channel.
 */
@Serializable
internal class TriggerData(val node: String, val stamp: Long, val from: String? = null, val tokens: Int = 1)

/** A pending interrupt of [node] (of this graph); [path] names it when it is in a child run or map task. */
@Serializable
internal class InterruptData(val node: String, val payload: String, val path: String? = null)

/** [TaskError]'s serializer as a class, as [ChildData.error] names it; the form of `TaskError.serializer()`. */
internal object TaskErrorData : KSerializer<TaskError> by TaskError.serializer()
