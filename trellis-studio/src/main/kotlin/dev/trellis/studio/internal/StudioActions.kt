package dev.trellis.studio.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.fork
import dev.trellis.runtime.resumeEvents
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.ApplicationCall
import io.ktor.server.request.receiveText
import io.ktor.server.routing.Routing
import io.ktor.server.routing.post
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.launch
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.longOrNull
import kotlinx.serialization.json.put
import java.time.Instant
import java.util.UUID

/**
 * The actions of the JSON API: start a run, answer a pending interrupt, resume, cancel, fork. Each goes through the
 * library's public API (`Graph.start`, `resumeEvents`, `fork`) with the studio's lease owner, so the store's leases
 * and fencing decide; the studio writes no row itself.
 */
internal class StudioActions(private val studio: Studio) {
    private val api = StudioApi(studio)

    fun install(routing: Routing) {
        routing.post("/api/v1/runs") { call.json(HttpStatusCode.Accepted) { start(call.body()) } }
        routing.post("/api/v1/runs/{id}/answer") { call.json(HttpStatusCode.Accepted) { answer(call.id, call.body()) } }
        routing.post("/api/v1/runs/{id}/resume") { call.json(HttpStatusCode.Accepted) { resume(call.id) } }
        routing.post("/api/v1/runs/{id}/cancel") { call.json(HttpStatusCode.Accepted) { cancel(call.id) } }
        routing.post("/api/v1/runs/{id}/fork") { call.json(HttpStatusCode.Accepted) { fork(call.id, call.body()) } }
    }

    private val ApplicationCall.id: String get() = parameters["id"]!!

    private suspend fun ApplicationCall.body(): JsonObject {
        val text = receiveText()
        if (text.isBlank()) return JsonObject(emptyMap())
        return try {
            Json.parseToJsonElement(text) as? JsonObject ?: badRequest("The request body must be a JSON object.")
        } catch (e: SerializationException) {
            badRequest("The request body is not JSON: ${e.message?.lineSequence()?.first()}")
        }
    }

    private fun start(body: JsonObject): JsonElement {
        val graphId = body.text("graphId") ?: badRequest("Pass the graph to run as \"graphId\".")
        val graph = studio.graph(graphId) ?: notFound(
            "Graph '$graphId' is not registered with the studio (registered: ${studio.graphs.keys.sorted()}).",
        )
        val input = edited(graph, graph.schema.initialState(), body["input"])
        val handle = studio.startRun(graph, input, body.text("runId"))
        return accepted(handle.runId, "started")
    }

    private suspend fun answer(runId: String, body: JsonObject): JsonElement {
        val (info, graph) = actionable(runId)
        val answer = body.text("answer") ?: badRequest("Pass the answer as \"answer\" (text).")
        val pending = info.let { api.summary(it) }["interrupts"].toString()
        val node = body.text("node") ?: run {
            val latest = studio.store.latest(runId)?.let(CheckpointPayload::of)
            val paths = latest?.interrupts.orEmpty().map { it.path ?: it.node }
            when (paths.size) {
                0 -> conflict("Run '$runId' has no pending interrupt to answer; resume it instead.")
                1 -> paths.single()
                else -> badRequest(
                    "Run '$runId' has ${paths.size} pending interrupts ($pending); name one as \"node\".",
                )
            }
        }
        follow(runId, graph.resumeEvents(runId, studio.options(null), mapOf(node to answer)))
        return accepted(runId, "resumed with an answer for '$node'")
    }

    private suspend fun resume(runId: String): JsonElement {
        val (_, graph) = actionable(runId)
        follow(runId, graph.resumeEvents(runId, studio.options(null)))
        return accepted(runId, "resumed")
    }

    private suspend fun cancel(runId: String): JsonElement {
        val info = api.info(runId)
        val live = studio.live[runId]
        if (live == null || !live.cancellable) {
            val holder = info.owner?.takeIf { info.leaseExpiresAt?.isAfter(Instant.now()) == true }
            conflict(
                "Run '$runId' is not running in this studio" +
                    (
                        holder?.let { "; worker '$it' holds it until ${info.leaseExpiresAt}: cancel or drain it there" }
                            ?: ""
                    ) +
                    ". The studio cancels only the runs it started, resumed or forked.",
            )
        }
        live.cancel()
        return accepted(runId, "cancelling")
    }

    private suspend fun fork(runId: String, body: JsonObject): JsonElement {
        val (info, graph) = actionable(runId, forFork = true)
        val sequence = (body["sequence"] as? JsonPrimitive)?.longOrNull
            ?: badRequest("Pass the checkpoint to fork from as \"sequence\" (a number).")
        studio.store.get(runId, sequence) ?: notFound(
            "Run '$runId' has no checkpoint $sequence (it has ${info.latestSequence}); fork from one it has.",
        )
        val edits = body["state"] as? JsonObject ?: JsonObject(emptyMap())
        val decoded = decodeAll(graph, edits)
        val forkId = body.text("runId") ?: "$runId-fork-${UUID.randomUUID().toString().take(6)}"
        if (studio.store.run(forkId) != null) conflict("A run '$forkId' exists already; pick another \"runId\".")
        val run = studio.live.begin(forkId)
        val started = CompletableDeferred<Unit>()
        run.job = studio.scope.launch {
            try {
                graph.fork(runId, sequence, studio.options(forkId)) { state ->
                    started.complete(Unit)
                    apply(state, decoded)
                }
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                started.completeExceptionally(e)
                studio.failures[forkId] = e.toString()
            } finally {
                studio.live.end(forkId)
            }
        }
        started.await()
        return accepted(forkId, "forked from $runId#$sequence")
    }

    /** The run and its graph, when the studio may act on it: a known run of a registered graph. */
    private suspend fun actionable(
        runId: String,
        forFork: Boolean = false,
    ): Pair<dev.trellis.checkpoint.RunInfo, Graph> {
        val info = api.info(runId)
        val graph = studio.graph(info.graphId) ?: conflict(
            "Run '$runId' is of graph '${info.graphId}', which is not registered with the studio; register it " +
                "(TrellisStudio.builder(store).graph(graph)) to act on its runs.",
        )
        val holder = info.owner
        if (forFork && holder != null && holder != studio.owner &&
            info.leaseExpiresAt?.isAfter(Instant.now()) == true
        ) {
            conflict(
                "Run '$runId' is owned by worker '$holder' until ${info.leaseExpiresAt}: it is running there and its " +
                    "checkpoints may still change. Fork it once it ends or its lease lapses (or drain it there first).",
            )
        }
        return info to graph
    }

    /** Collects [events] in the studio's scope (live on the run's page); fails here if the run cannot start. */
    private suspend fun follow(runId: String, events: Flow<RunEvent>) {
        val run = studio.live.begin(runId)
        val first = CompletableDeferred<Unit>()
        run.job = studio.scope.launch {
            try {
                events.collect {
                    studio.live.record(it)
                    first.complete(Unit)
                }
                first.complete(Unit)
            } catch (e: CancellationException) {
                first.completeExceptionally(e)
                throw e
            } catch (e: Exception) {
                if (!first.completeExceptionally(e)) studio.failures[runId] = e.toString()
            } finally {
                studio.live.end(runId)
            }
        }
        first.await()
    }

    private fun edited(graph: Graph, state: State, edits: JsonElement?): State {
        if (edits == null) return state
        val obj = edits as? JsonObject ?: badRequest("\"input\" must be a JSON object of state keys to values.")
        return apply(state, decodeAll(graph, obj))
    }

    /** Each edit decoded through its key's serializer; every wrong key or value reported at once, by key. */
    private fun decodeAll(graph: Graph, edits: JsonObject): List<Pair<StateKey<*>, Any?>> {
        val problems = ArrayList<String>()
        val out = ArrayList<Pair<StateKey<*>, Any?>>()
        for ((name, element) in edits) {
            val key = graph.schema.keyOrNull(name)
            if (key == null) {
                problems += "State key '$name' is not a key of schema '${graph.schema.name}' " +
                    "(keys: ${graph.schema.keys.joinToString { it.name }})."
                continue
            }
            try {
                out += key to StateFold.decode(key, element)
            } catch (e: IllegalArgumentException) {
                problems += e.message ?: "State key '$name': wrong value."
            }
        }
        if (problems.isNotEmpty()) throw ApiException(HttpStatusCode.BadRequest, problems.joinToString(" "))
        return out
    }

    private fun apply(state: State, edits: List<Pair<StateKey<*>, Any?>>): State {
        var out = state
        for ((key, value) in edits) {
            @Suppress("UNCHECKED_CAST")
            out = out.with(key as StateKey<Any?>, value)
        }
        return out
    }

    private fun accepted(runId: String, what: String) = buildJsonObject {
        put("runId", runId)
        put("action", what)
    }

    private fun JsonObject.text(name: String): String? = (this[name] as? JsonPrimitive)?.contentOrNull?.ifBlank { null }
}
