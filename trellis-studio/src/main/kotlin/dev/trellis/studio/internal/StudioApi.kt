package dev.trellis.studio.internal

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.RunInfo
import dev.trellis.checkpoint.RunQuery
import dev.trellis.checkpoint.UnreadableCheckpointException
import dev.trellis.graph.State
import dev.trellis.runtime.stateAt
import dev.trellis.studio.timeline.RunTimeline
import dev.trellis.studio.timeline.TimelineViews
import dev.trellis.studio.timeline.TimelineWindow
import io.ktor.http.Parameters
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.add
import kotlinx.serialization.json.addJsonObject
import kotlinx.serialization.json.buildJsonArray
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray
import java.time.Duration
import java.time.Instant

/** The read side of the JSON API (`docs/studio.md`, "JSON API"): runs, a run, its checkpoints, states and diffs. */
internal class StudioApi(private val studio: Studio) {
    private val store get() = studio.store

    fun about(): JsonElement = buildJsonObject {
        put("name", "Trellis Studio")
        put("api", "v1")
        put("store", store.toString())
        put("owner", studio.owner)
    }

    fun graphs(): JsonElement = buildJsonArray {
        for (graph in studio.graphs.values.sortedBy { it.id }) {
            addJsonObject {
                put("graphId", graph.id)
                put("version", graph.schema.version)
                putJsonArray("nodes") { graph.nodes.forEach { add(it.id) } }
                putJsonArray("keys") {
                    graph.schema.keys.forEach {
                        addJsonObject {
                            put("name", it.name)
                            put("type", it.typeName)
                        }
                    }
                }
            }
        }
    }

    private fun limit(text: String?): Int {
        val limit = text?.let { it.toIntOrNull() ?: badRequest("Parameter 'limit' must be a number, was '$it'.") }
            ?: PAGE
        if (limit !in 1..MAX_PAGE) badRequest("Parameter 'limit' must be from 1 to $MAX_PAGE, but was $limit.")
        return limit
    }

    suspend fun runs(q: Parameters): JsonElement {
        val limit = limit(q["limit"])
        val status = q["status"]?.ifBlank { null }?.uppercase()
        if (status != null && status !in STATUSES) {
            badRequest("Parameter 'status' must be one of ${STATUSES.joinToString()}, but was '$status'.")
        }
        val order = when (val text = q["order"]?.ifBlank { null } ?: NEWEST) {
            NEWEST -> RunQuery.Order.NEWEST_FIRST
            BY_ID -> RunQuery.Order.RUN_ID
            else -> badRequest(
                "Parameter 'order' must be '$NEWEST' (the default: newest first) or '$BY_ID', but was '$text'.",
            )
        }
        val query = RunQuery(status, q["graph"]?.ifBlank { null }, q["after"]?.ifBlank { null }, limit + 1, order)
        val page = store.runs(query)
        val shown = page.take(limit)
        val fleetRows = studio.fleet?.rows(shown.map { it.runId }).orEmpty()
        return buildJsonObject {
            put("order", if (order == RunQuery.Order.NEWEST_FIRST) NEWEST else BY_ID)
            put("runs", JsonArray(shown.map { summary(it, fleetRows[it.runId]) }))
            put("next", if (page.size > limit) shown.last().runId else null)
        }
    }

    /**
     * A run as the list shows it: its row in the store, read with its first and latest checkpoints, and its row in the
     * fleet's queue ([fleetRow], null when the studio has no fleet or the queue no such run).
     */
    suspend fun summary(info: RunInfo, fleetRow: JsonObject? = null): JsonObject {
        val latest = readable { store.latest(info.runId) }
        val first = if (info.latestSequence <= 1L) latest else readable { store.get(info.runId, 1) }
        val payload = latest?.let(CheckpointPayload::of)
        val now = Instant.now()
        val live = studio.live[info.runId]
        return buildJsonObject {
            put("runId", info.runId)
            put("graphId", info.graphId)
            put("graphVersion", payload?.stateVersion)
            put("status", info.latestStatus ?: "NEW")
            put("checkpoints", info.latestSequence)
            put("startedAt", first?.createdAt?.toString())
            put("updatedAt", latest?.createdAt?.toString())
            put(
                "durationMs",
                if (first != null &&
                    latest != null
                ) {
                    Duration.between(first.createdAt, latest.createdAt).toMillis()
                } else {
                    null
                },
            )
            put("error", payload?.errors?.firstOrNull()?.let { fold(it, 300) })
            putJsonArray("interrupts") {
                payload?.interrupts?.forEach {
                    addJsonObject {
                        put("node", it.path ?: it.node)
                        put("payload", fold(it.payload, 300))
                    }
                }
            }
            put("owner", info.owner)
            put("leaseExpiresAt", info.leaseExpiresAt?.toString())
            put("leaseLive", info.leaseExpiresAt?.isAfter(now) == true)
            put("epoch", info.epoch)
            put("forkedFrom", first?.forkedFrom?.toString())
            put("live", live?.running == true)
            put("cancellable", live?.cancellable == true)
            // A cancelled run saves no final checkpoint: the store keeps it RUNNING; the studio knows it cancelled it.
            put(
                "cancelled",
                live?.cancelled == true && !live.running && info.latestStatus == "RUNNING" &&
                    info.leaseExpiresAt?.isAfter(now) != true,
            )
            put("graphRegistered", studio.graph(info.graphId) != null)
            put("fleet", fleetRow ?: JsonNull)
        }
    }

    suspend fun run(runId: String): JsonElement {
        val info = info(runId)
        val summary = summary(info, studio.fleet?.row(runId))
        val graph = studio.graph(info.graphId)
        return buildJsonObject {
            summary.forEach { (k, v) -> put(k, v) }
            if (graph != null) {
                val timeline = timelineOf(runId, info)
                put("graphSvg", timeline?.let { TimelineViews.graphSvg(it) } ?: TimelineViews.emptyGraphSvg(graph))
                put("mermaid", timeline?.mermaid ?: graph.toMermaid())
                putJsonArray("nodes") {
                    timeline?.nodes?.forEach {
                        addJsonObject {
                            put("nodeId", it.nodeId)
                            put("status", if (it.executions == 0) "NOT_RUN" else it.status.name)
                            put("executions", it.executions)
                        }
                    }
                }
                putJsonArray("keys") {
                    graph.schema.keys.forEach {
                        addJsonObject {
                            put("name", it.name)
                            put("type", it.typeName)
                        }
                    }
                }
            }
        }
    }

    /**
     * The run's timeline, drawn from [fromText] to [toText] microseconds after its start (a zoom; the whole run
     * without them; an end past the run's is the run's).
     */
    suspend fun timeline(runId: String, fromText: String?, toText: String?): JsonElement {
        val from = micros(fromText, "from")
        val to = micros(toText, "to")
        if (from != null && to != null && to <= from) {
            badRequest("Parameter 'to' ($to) must be after 'from' ($from): the window to draw, in microseconds.")
        }
        val info = info(runId)
        val timeline = timelineOf(runId, info) ?: conflict(unregistered(info))
        val whole = TimelineWindow.whole(timeline.duration)
        val end = to?.let { Duration.ofNanos(it * 1_000) }?.coerceAtMost(whole.to) ?: whole.to
        val start = from?.let { Duration.ofNanos(it * 1_000) }?.coerceAtMost(end.minusNanos(1)) ?: Duration.ZERO
        return TimelineViews.json(timeline, TimelineWindow(start, end, whole.total))
    }

    private fun micros(text: String?, name: String): Long? = text?.ifBlank { null }?.let {
        it.toLongOrNull()?.takeIf { v -> v >= 0 } ?: badRequest(
            "Parameter '$name' must be a time after the run's start in microseconds (0 or more), but was '$it'.",
        )
    }

    suspend fun checkpoints(runId: String): JsonElement {
        info(runId)
        val history = store.history(runId)
        var previous: CheckpointPayload? = null
        return buildJsonArray {
            for (record in history) {
                val payload = CheckpointPayload.of(record)
                add(checkpointJson(record, payload, previous))
                if (payload != null && !payload.childrenOnly) previous = payload
            }
        }
    }

    suspend fun checkpoint(runId: String, sequence: Long): JsonElement {
        val info = info(runId)
        val record = readable { store.get(runId, sequence) } ?: notFound(
            "Run '$runId' has no checkpoint $sequence (it has ${info.latestSequence}; pruned ones are gone).",
        )
        val previous = if (sequence >
            1
        ) {
            readable { store.get(runId, sequence - 1) }?.let(CheckpointPayload::of)
        } else {
            null
        }
        return buildJsonObject {
            checkpointJson(record, CheckpointPayload.of(record), previous).forEach { (k, v) -> put(k, v) }
            put("state", JsonObject(stateAt(info, sequence).mapValues { (_, v) -> v }))
        }
    }

    suspend fun diff(runId: String, from: Long, to: Long): JsonElement {
        val info = info(runId)
        for (s in listOf(from, to)) {
            if (readable { store.get(runId, s) } == null) {
                notFound("Run '$runId' has no checkpoint $s (it has ${info.latestSequence}; pruned ones are gone).")
            }
        }
        val a = stateAt(info, from)
        val b = stateAt(info, to)
        return buildJsonObject {
            put("from", from)
            put("to", to)
            putJsonArray("added") { for ((k, v) in b) if (k !in a) add(entry(k, v)) }
            putJsonArray("removed") { for ((k, v) in a) if (k !in b) add(entry(k, v)) }
            putJsonArray("changed") {
                for ((k, v) in b) {
                    val old = a[k] ?: continue
                    if (old != v) {
                        addJsonObject {
                            put("key", k)
                            put("from", shown(old))
                            put("to", shown(v))
                        }
                    }
                }
            }
            putJsonArray("unchanged") { for ((k, v) in b) if (a[k] == v) add(k) }
        }
    }

    /** The fleet's overview (`GET /api/v1/fleet`). */
    suspend fun fleet(): JsonElement = fleetLink().overview()

    /** Runs of the fleet's queue in a fleet status (`GET /api/v1/fleet/runs`), QUEUED by default. */
    suspend fun fleetRuns(q: Parameters): JsonElement {
        val link = fleetLink()
        val limit = limit(q["limit"])
        val status = q["status"]?.ifBlank { null }?.uppercase() ?: "QUEUED"
        return buildJsonObject { put("runs", link.runs(status, limit)) }
    }

    /** Run [runId]'s row in the fleet's queue (`GET /api/v1/runs/{id}/fleet`). */
    suspend fun fleetRun(runId: String): JsonElement = fleetLink().row(runId) ?: notFound(
        "Run '$runId' is not in the fleet's queue (schema ${fleetLink().schema}): it was not submitted to the fleet, " +
            "or retention deleted its row; GET /api/v1/runs/$runId shows it from the store.",
    )

    private fun fleetLink(): FleetLink = studio.fleet ?: notFound(
        "This studio has no fleet: start it with TrellisStudio.builder(store).fleet(fleetClient) to show the fleet's " +
            "queue beside the store.",
    )

    fun events(runId: String): JsonElement {
        val events = studio.live.events(runId) ?: notFound(
            "No events of run '$runId' in this studio: events are kept only for runs it started, resumed or forked, " +
                "or that were recorded with studio.record(event) in this JVM; its checkpoints show the rest.",
        )
        return buildJsonObject {
            put("live", studio.live[runId]?.running == true)
            put("events", JsonArray(events.map(::eventJson)))
        }
    }

    /** The state at checkpoint [sequence] by key name, as JSON through each key's serializer. */
    private suspend fun stateAt(info: RunInfo, sequence: Long): Map<String, JsonElement> {
        val graph = studio.graph(info.graphId)
        if (graph != null) {
            val state = graph.stateAt(store, info.runId, sequence)
            val out = LinkedHashMap<String, JsonElement>()
            for (key in graph.schema.keys) {
                val value = state.getOrUnset(key)
                if (value !== State.Unset) out[key.name] = StateFold.encode(key, value)
            }
            return out
        }
        val chain = store.history(info.runId).filter { it.sequence <= sequence }.mapNotNull(CheckpointPayload::of)
        return StateFold.fold(null, chain)
    }

    private suspend fun timelineOf(runId: String, info: RunInfo): RunTimeline? {
        val graph = studio.graph(info.graphId) ?: return null
        val events = studio.live.events(runId)
        if (events != null && events.any { it is dev.trellis.runtime.RunEvent.RunStarted }) {
            return RunTimeline.of(graph, events.dropWhile { it !is dev.trellis.runtime.RunEvent.RunStarted })
        }
        val history = store.history(runId)
        if (history.isEmpty()) return null
        return RunTimeline.fromCheckpoints(graph, history)
    }

    private fun checkpointJson(record: CheckpointRecord, payload: CheckpointPayload?, previous: CheckpointPayload?) =
        buildJsonObject {
            put("sequence", record.sequence)
            put("parentSequence", record.parentSequence)
            put("createdAt", record.createdAt.toString())
            put("status", record.status)
            put("kind", record.kind.name)
            put("forkedFrom", record.forkedFrom?.toString())
            putJsonArray("executed") {
                val before = previous?.nodes.orEmpty()
                payload?.nodes?.forEach { (node, count) ->
                    val was = before[node]?.count ?: 0
                    if (count.count > was && record.kind == CheckpointRecord.Kind.DELTA) add("$node#${count.count}")
                }
            }
            putJsonArray("writes") {
                payload?.writes?.forEach {
                    addJsonObject {
                        put("key", it.key)
                        put("value", shown(it.value))
                    }
                }
            }
            putJsonArray("interrupts") {
                payload?.interrupts?.forEach {
                    addJsonObject {
                        put("node", it.path ?: it.node)
                        put("payload", fold(it.payload, 300))
                    }
                }
            }
            putJsonArray("errors") { payload?.errors?.forEach { add(fold(it, 500)) } }
        }

    suspend fun info(runId: String): RunInfo = store.run(runId) ?: notFound(
        "No run '$runId' in the store $store; check the id (GET /api/v1/runs lists the runs).",
    )

    private fun unregistered(info: RunInfo) =
        "Run '${info.runId}' is of graph '${info.graphId}', which is not registered with the studio; register it " +
            "(TrellisStudio.builder(store).graph(graph)) to draw and act on its runs."

    private suspend fun <T> readable(read: suspend () -> T?): T? = try {
        read()
    } catch (e: UnreadableCheckpointException) {
        null
    }

    private companion object {
        const val PAGE = 50
        const val MAX_PAGE = 1_000
        const val NEWEST = "newest"
        const val BY_ID = "id"
        val STATUSES = listOf("RUNNING", "COMPLETED", "FAILED", "INTERRUPTED", "DRAINED", "CANCELLED")

        fun entry(key: String, value: JsonElement) = buildJsonObject {
            put("key", key)
            put("value", shown(value))
        }

        /** A value as the API shows it: `{json, folded}` with the JSON text cut at 400 characters when longer. */
        fun shown(value: JsonElement): JsonObject {
            val text = value.toString()
            return buildJsonObject {
                put("json", JsonPrimitive(fold(text, 400)))
                put("folded", text.length > 400)
                put("length", text.length)
                if (text.length > 400) put("full", text)
            }
        }
    }
}
