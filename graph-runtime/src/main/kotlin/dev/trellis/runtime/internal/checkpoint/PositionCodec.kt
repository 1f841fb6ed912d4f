package dev.trellis.runtime.internal.checkpoint

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.CheckpointFormatException
import dev.trellis.runtime.StateMigration
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
import kotlinx.serialization.builtins.serializer
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.doubleOrNull
import java.time.Instant

/** The scope of run snapshots in their envelope. */
internal const val RUN_SCOPE = "trellis.run"

/** The version of the snapshot format this code writes and reads. */
internal const val FORMAT_VERSION = 1

internal val PersistenceJson = Json {
    encodeDefaults = false
    ignoreUnknownKeys = false
}

/** A run's position read back from a snapshot or a chain of checkpoints. */
internal class Restored(
    val data: PositionData,
    val state: State,
    val appData: JsonObject,
    /** The child runs and map tasks in flight at this position, by key (`research#2`, `summarize#1[3]`). */
    val children: Map<String, ChildData> = emptyMap(),
)

internal object PositionCodec {
    /**
     * The envelope `{scope, schemaVersion, createdAt, appData, data}` as JSON text, written straight to a string
     * (no intermediate JSON tree: checkpoints are written after every step).
     */
    fun wrap(data: PositionData, createdAt: Instant, appData: JsonObject = JsonObject(emptyMap())): String {
        val position = PersistenceJson.encodeToString(PositionData.serializer(), data)
        val app = if (appData.isEmpty()) "{}" else PersistenceJson.encodeToString(JsonObject.serializer(), appData)
        return StringBuilder(position.length + app.length + 96)
            .append("{\"scope\":\"").append(RUN_SCOPE)
            .append("\",\"schemaVersion\":").append(FORMAT_VERSION)
            .append(",\"createdAt\":\"").appendIso(createdAt)
            .append("\",\"appData\":").append(app)
            .append(",\"data\":").append(position)
            .append('}')
            .toString()
    }

    /** The envelope of a record that carries only [children] patches (the run's own position is unchanged). */
    fun childrenOnly(graph: Graph, runId: String, children: Map<String, ChildData>, createdAt: Instant): String =
        wrap(
            PositionData(
                graphId = graph.id,
                runId = runId,
                status = "RUNNING",
                stateSchema = graph.schema.name,
                stateVersion = graph.schema.version,
                version = 0,
                totalExecutions = 0,
                children = children,
                childrenOnly = true,
            ),
            createdAt,
        )

    fun encodeValue(key: StateKey<*>, value: Any?): JsonElement = encoding(key, value) { serializer ->
        PersistenceJson.encodeToJsonElement(serializer, value)
    }

    /** [value] of [key] as JSON text, written straight to a string. */
    fun encodeValueText(key: StateKey<*>, value: Any?): String = encoding(key, value) { serializer ->
        PersistenceJson.encodeToString(serializer, value)
    }

    /**
     * Appends [value] of [key] as JSON text to [out]: an `Int`, `Long`, `Boolean` or `String` of a key with that
     * type's built-in serializer directly (the same JSON value), any other through the key's serializer.
     */
    fun appendValueText(out: StringBuilder, key: StateKey<*>, value: Any?) {
        val serializer = key.serializer
        when {
            value is Int && serializer === Int.serializer() -> out.append(value)
            value is Long && serializer === Long.serializer() -> out.append(value)
            value is Boolean && serializer === Boolean.serializer() -> out.append(value)
            value is String && serializer === String.serializer() -> out.appendJson(value)
            else -> out.append(encodeValueText(key, value))
        }
    }

    private inline fun <R> encoding(key: StateKey<*>, value: Any?, encode: (KSerializer<Any?>) -> R): R {
        @Suppress("UNCHECKED_CAST")
        val serializer = key.serializer as KSerializer<Any?>
        return try {
            encode(serializer)
        } catch (e: SerializationException) {
            throw IllegalStateException(
                "State key '${key.name}' holds a value its serializer cannot write " +
                    "(${value?.javaClass?.name}): ${e.message}. Give the key a serializer for the values it holds.",
                e,
            )
        }
    }

    /** Reads one envelope; [where] names it in errors ("checkpoint 3 of run r1", "snapshot"). */
    fun unwrap(graph: Graph, text: String, where: String): Pair<Envelope, PositionData> {
        // Parsed first, then decoded: both steps fail with a SerializationException, and only this order tells text
        // that is not JSON at all from JSON that is not an envelope.
        val json = try {
            PersistenceJson.parseToJsonElement(text)
        } catch (e: SerializationException) {
            throw CheckpointFormatException(
                "The $where is corrupt: it is not valid JSON (${e.message?.lineSequence()?.first()}).",
                e,
            )
        }
        // The parser reads a bare word as an unquoted literal; JSON has only true, false, null and numbers.
        if (json is JsonPrimitive && !json.isString && json !is JsonNull && json.booleanOrNull == null &&
            json.doubleOrNull == null
        ) {
            throw CheckpointFormatException(
                "The $where is corrupt: it is not valid JSON (it starts with '${json.content.take(20)}').",
            )
        }
        val envelope = try {
            PersistenceJson.decodeFromJsonElement(Envelope.serializer(), json)
        } catch (e: SerializationException) {
            throw CheckpointFormatException(
                "The $where is corrupt: it is not a Trellis snapshot envelope (${e.message?.lineSequence()?.first()}).",
                e,
            )
        } catch (e: IllegalArgumentException) {
            throw CheckpointFormatException(
                "The $where is corrupt: it is not a Trellis snapshot envelope (${e.message?.lineSequence()?.first()}).",
                e,
            )
        }
        if (envelope.scope != RUN_SCOPE) {
            throw CheckpointFormatException(
                "The $where has scope '${envelope.scope}', but a run snapshot has scope '$RUN_SCOPE'.",
            )
        }
        if (envelope.schemaVersion != FORMAT_VERSION) {
            throw CheckpointFormatException(
                "The $where uses snapshot format ${envelope.schemaVersion}, but this Trellis reads format " +
                    "$FORMAT_VERSION; load it with the Trellis version that wrote it.",
            )
        }
        val data = try {
            PersistenceJson.decodeFromJsonElement(PositionData.serializer(), envelope.data)
        } catch (e: SerializationException) {
            throw CheckpointFormatException(
                "The $where is corrupt: its data is not a run position (${e.message?.lineSequence()?.first()}).",
                e,
            )
        } catch (e: IllegalArgumentException) {
            throw CheckpointFormatException(
                "The $where is corrupt: its data is not a run position (${e.message?.lineSequence()?.first()}).",
                e,
            )
        }
        if (data.graphId != graph.id) {
            throw CheckpointFormatException(
                "The $where belongs to graph '${data.graphId}', not to graph '${graph.id}'; load it with graph '${data.graphId}'.",
            )
        }
        return envelope to data
    }

    /**
     * Folds a chain (a FULL position followed by the DELTAs written after it, oldest first) into one full
     * position and decodes its state, migrating an older schema version first.
     */
    fun restore(
        graph: Graph,
        chain: List<Pair<Envelope, PositionData>>,
        migrations: List<StateMigration>,
        where: String,
    ): Restored {
        val base = chain.first().second
        val baseState =
            base.state ?: throw CheckpointFormatException("The $where starts from a delta without its full snapshot.")
        val current = graph.schema.version
        val written = chain.last { !it.second.childrenOnly }.second.stateVersion
        if (written > current) {
            throw CheckpointFormatException(
                "The $where was written with state schema version $written of '${base.stateSchema}', newer than " +
                    "this code's version $current; resume it with code that has version $written or newer.",
            )
        }
        if (written < current && chain.count { !it.second.childrenOnly } > 1) {
            throw CheckpointFormatException(
                "The $where was written with state schema version $written and ends in a delta; migrations to " +
                    "version $current need a full checkpoint. Resume the run once with the version-$written code " +
                    "(it saves a full checkpoint when it ends).",
            )
        }
        var stateJson = JsonObject(baseState)
        if (written < current) stateJson = migrate(stateJson, written, current, migrations, where)
        val values = graph.schema.initialState().copyValues()
        val versions = LongArray(values.size)
        val keys = graph.topology.keys
        for ((name, element) in stateJson) {
            val key = graph.schema.keyOrNull(name) ?: throw CheckpointFormatException(
                "The $where holds state key '$name', which schema '${graph.schema.name}' (version $current) does " +
                    "not declare; register a StateMigration that removes or renames it, or declare the key again.",
            )
            values[key.index] = decodeValue(key, element, where)
        }
        val lastWriters = LinkedHashMap<String, String>()
        val nodes = LinkedHashMap<String, NodeData>()
        val children = LinkedHashMap<String, ChildData>()
        val compensable = ArrayList<CompensableData>()
        for ((_, data) in chain) {
            for ((key, patch) in data.children) children[key] = children[key]?.plus(patch) ?: patch
            if (data.childrenOnly) continue
            compensable += data.compensable
            for (write in data.writes) {
                val key = graph.schema.keyOrNull(write.key)
                    ?: throw CheckpointFormatException(
                        "The $where writes state key '${write.key}', which schema '${graph.schema.name}' does not declare.",
                    )
                val update = decodeValue(key, write.value, where)

                @Suppress("UNCHECKED_CAST")
                val reducer = keys[key.index].reducer as dev.trellis.graph.Reducer<Any?>?
                val old = values[key.index]
                values[key.index] = if (reducer == null || old === State.Unset) update else reducer.reduce(old, update)
            }
            for ((name, v) in data.versions) graph.schema.keyOrNull(name)?.let { versions[it.index] = v }
            lastWriters += data.lastWriters
            nodes += data.nodes
        }
        val last = chain.last { !it.second.childrenOnly }.second
        requireKnownNodes(graph, last, where, "records", nodes.keys)
        requireKnownNodes(graph, last, where, "has a pending trigger of", last.triggers.map { it.node })
        requireKnownNodes(graph, last, where, "has ready", last.ready)
        requireKnownNodes(graph, last, where, "has a pending interrupt of", last.interrupts.map { it.node })
        requireValidPosition(last, nodes, where)
        val merged = PositionData(
            graphId = last.graphId,
            runId = last.runId,
            status = last.status,
            stateSchema = last.stateSchema,
            stateVersion = current,
            version = last.version,
            lastWriters = lastWriters,
            nodes = nodes,
            triggers = last.triggers,
            ready = last.ready,
            totalExecutions = last.totalExecutions,
            interrupts = last.interrupts,
            errors = last.errors,
            meters = last.meters,
            spentNanos = last.spentNanos,
            compensable = compensable,
            compensations = last.compensations,
        )
        // Only the children of executions that run again on resume matter; those of finished ones are history.
        val live = children.filterKeys { key ->
            val hash = key.indexOf('#')
            val node = if (hash > 0) key.substring(0, hash) else return@filterKeys false
            val number = key.substring(hash + 1).substringBefore('[').toIntOrNull() ?: return@filterKeys false
            node in merged.ready && (nodes[node]?.count ?: 0) + 1 == number
        }
        return Restored(
            merged,
            State.fromArrays(graph.schema, values, versions),
            chain.last().first.appData,
            live,
        )
    }

    fun decodeValue(key: StateKey<*>, element: JsonElement, where: String): Any? = try {
        PersistenceJson.decodeFromJsonElement(key.serializer, element)
    } catch (e: SerializationException) {
        throw CheckpointFormatException(
            "The $where holds a value of state key '${key.name}' that is not a ${key.typeName}: ${e.message}",
            e,
        )
    } catch (e: IllegalArgumentException) {
        throw CheckpointFormatException(
            "The $where holds a value of state key '${key.name}' that is not a ${key.typeName}: ${e.message}",
            e,
        )
    }

    private fun migrate(
        state: JsonObject,
        from: Int,
        to: Int,
        migrations: List<StateMigration>,
        where: String,
    ): JsonObject {
        var json = state
        for (version in from until to) {
            val step = migrations.firstOrNull { it.from == version } ?: throw CheckpointFormatException(
                "The $where was written with state schema version $from, and this code has version $to, but no " +
                    "StateMigration from version $version to ${version + 1} is registered; add one to Checkpointing(migrations = ...).",
            )
            json = step.migrate(json)
        }
        return json
    }
}
