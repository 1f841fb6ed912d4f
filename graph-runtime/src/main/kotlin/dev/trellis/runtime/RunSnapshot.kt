@file:JvmName("Snapshots")

package dev.trellis.runtime

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.internal.checkpoint.PositionCodec
import dev.trellis.runtime.internal.checkpoint.PositionData
import dev.trellis.runtime.internal.checkpoint.Restored
import dev.trellis.runtime.internal.checkpoint.loadRecord
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.resultFor
import kotlinx.serialization.json.JsonObject
import java.time.Instant

/**
 * A self-contained snapshot of a run: a JSON envelope `{scope, schemaVersion, createdAt, appData, data}` holding
 * the run's state (through each key's serializer) and, with [SnapshotPreset.RESUMABLE], the scheduler's position.
 * Take one with [takeSnapshot], store its [toJson] anywhere, read it back with [loadSnapshot] (which validates
 * scope, format version, graph id and state schema), and continue it with [resume].
 */
public class RunSnapshot internal constructor(
    /** The graph it belongs to. */
    public val graphId: String,
    /** The run it was taken from. */
    public val runId: String,
    /** What it holds. */
    public val preset: SnapshotPreset,
    /** When it was taken. */
    public val createdAt: Instant,
    /** The caller's own data, kept as given. */
    public val appData: JsonObject,
    /** The run's state. */
    public val state: State,
    internal val restored: Restored,
    private val json: String,
) {
    /** The snapshot as JSON text. */
    public fun toJson(): String = json

    override fun toString(): String = "RunSnapshot($graphId, run=$runId, $preset, createdAt=$createdAt)"
}

/** What a [RunSnapshot] holds. */
public enum class SnapshotPreset {
    /** The state only: a new run started from it begins at the entry points. */
    STATE,

    /** The state and the scheduler's position (counts, triggers, ready nodes, interrupts): the run continues where it was. */
    RESUMABLE,
}

/** Takes a snapshot of checkpoint [sequence] (the latest when null) of run [runId] in [store]. */
public suspend fun Graph.takeSnapshot(
    store: CheckpointStore,
    runId: String,
    sequence: Long? = null,
    preset: SnapshotPreset = SnapshotPreset.RESUMABLE,
    appData: JsonObject = JsonObject(emptyMap()),
    migrations: List<StateMigration> = emptyList(),
): RunSnapshot {
    val (_, restored) = loadRecord(this, store, runId, sequence, migrations)
    val state = restored.state
    val stateJson = LinkedHashMap<String, kotlinx.serialization.json.JsonElement>()
    for (key in topology.keys) {
        val value = state.valueAt(key.index)
        if (value !== State.Unset) stateJson[key.name] = PositionCodec.encodeValue(key, value)
    }
    val versions = topology.keys.filter { state.versionAt(it.index) != 0L }.associate {
        it.name to
            state.versionAt(it.index)
    }
    val d = restored.data
    val data = if (preset == SnapshotPreset.STATE) {
        PositionData(
            id,
            runId,
            SnapshotPreset.STATE.name,
            schema.name,
            schema.version,
            stateJson,
            versions = versions,
            version = d.version,
            totalExecutions = 0,
        )
    } else {
        PositionData(
            id,
            runId,
            d.status,
            schema.name,
            schema.version,
            stateJson,
            emptyList(),
            versions,
            d.lastWriters,
            d.version,
            d.nodes,
            d.triggers,
            ready = d.ready,
            totalExecutions = d.totalExecutions,
            interrupts = d.interrupts,
            errors = d.errors,
            children = restored.children,
        )
    }
    val createdAt = Instant.now()
    return RunSnapshot(
        id,
        runId,
        preset,
        createdAt,
        appData,
        state,
        Restored(data, state, appData, restored.children),
        PositionCodec.wrap(data, createdAt, appData),
    )
}

/**
 * Reads a snapshot taken from this graph, validating its scope, format version, graph id and state schema
 * (older schema versions go through [migrations]).
 *
 * @throws CheckpointFormatException naming what is wrong; nothing is half-loaded.
 */
@JvmOverloads
public fun Graph.loadSnapshot(json: String, migrations: List<StateMigration> = emptyList()): RunSnapshot {
    val unwrapped = PositionCodec.unwrap(this, json, "snapshot")
    if (unwrapped.second.state == null) {
        throw CheckpointFormatException("The snapshot holds no state; it is not a full snapshot.")
    }
    val restored = PositionCodec.restore(this, listOf(unwrapped), migrations, "snapshot")
    val preset = if (unwrapped.second.status == SnapshotPreset.STATE.name) {
        SnapshotPreset.STATE
    } else {
        SnapshotPreset.RESUMABLE
    }
    val createdAt = try {
        Instant.parse(unwrapped.first.createdAt)
    } catch (e: java.time.format.DateTimeParseException) {
        throw CheckpointFormatException(
            "The snapshot's createdAt '${unwrapped.first.createdAt}' is not an ISO-8601 instant.",
            e,
        )
    }
    return RunSnapshot(
        id,
        unwrapped.second.runId,
        preset,
        createdAt,
        unwrapped.first.appData,
        restored.state,
        restored,
        json,
    )
}

/**
 * Runs this graph on from [snapshot] as a new run (id from [options], or a fresh one): a RESUMABLE snapshot
 * continues where its run was; a STATE snapshot starts at the entry points with its state.
 */
public suspend fun Graph.resume(snapshot: RunSnapshot, options: RunOptions = RunOptions.DEFAULT): RunResult {
    require(snapshot.graphId == id) { "The snapshot belongs to graph '${snapshot.graphId}', not to graph '$id'." }
    if (snapshot.preset == SnapshotPreset.STATE) return invoke(snapshot.state, options)
    val d = snapshot.restored.data
    val data = PositionData(
        id,
        options.runId ?: "",
        "RUNNING",
        d.stateSchema,
        d.stateVersion,
        null,
        emptyList(),
        emptyMap(),
        d.lastWriters,
        d.version,
        d.nodes,
        d.triggers,
        ready = d.ready,
        totalExecutions = d.totalExecutions,
    )
    val engine =
        Engine(
            this,
            snapshot.state,
            options,
            null,
            Restored(data, snapshot.state, snapshot.appData, snapshot.restored.children),
            fresh = true,
        )
    return engine.resultFor(options)
}
