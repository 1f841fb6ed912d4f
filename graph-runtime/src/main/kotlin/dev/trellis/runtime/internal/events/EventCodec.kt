package dev.trellis.runtime.internal.events

import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import dev.trellis.graph.StateSchema
import dev.trellis.runtime.Interrupt
import dev.trellis.runtime.NodeExecution
import dev.trellis.runtime.NodeResult
import dev.trellis.runtime.RunDetails
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.PositionCodec
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.buildJsonArray
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.double
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlinx.serialization.json.put
import java.time.Duration
import java.time.Instant

/**
 * A [RunEvent] as JSON and back, for a caller in another process than the run (`docs/temporal.md`, "Live events
 * across JVMs"). The fields are the event's own, named as the Studio's event JSON names them (`type`, `runId`,
 * `sequence`, `timestamp`, `nodeId`, `path`, `execution`, `task`, ...); what cannot cross a process is carried as
 * follows:
 * - a state (`RunStarted.input`, a terminal event's final state) as its set values by key name, each written by its
 *   key's serializer as checkpoints write it, and read back with the keys of the reader's schema;
 * - a `Custom` payload as its `toString()` (a `String` payload is itself): the reader gets a `String`;
 * - a `Throwable` as its type (by default its class name) and message; the reader rebuilds it with its own factory;
 * - a terminal event's `RunResult` as its status, final state, per node its status, executions, attempts, duration
 *   and last error, its duration, errors, pending interrupts and meters; not its execution list, child results nor
 *   compensations (the rebuilt result has none).
 */
internal object EventCodec {
    fun encode(event: RunEvent, typeOf: (Throwable) -> String): JsonObject = buildJsonObject {
        put("type", event.javaClass.simpleName)
        put("runId", event.runId)
        put("sequence", event.sequence)
        put("timestamp", event.timestamp.toString())
        if (event is RunEvent.NodeEvent) {
            put("nodeId", event.nodeId)
            put("path", event.path)
            put("execution", event.execution)
            put("task", event.task)
        }
        when (event) {
            is RunEvent.RunStarted -> {
                put("graphId", event.graphId)
                put("input", state(event.input))
            }
            is RunEvent.NodeStarted, is RunEvent.NodeCancelled, is RunEvent.NodeCompensating -> Unit
            is RunEvent.NodeRetrying -> {
                put("attempt", event.attempt)
                put("error", error(event.error, typeOf))
                put("delayNanos", event.delay.toNanos())
            }
            is RunEvent.NodeCompleted -> {
                put("attempts", event.attempts)
                put("durationNanos", event.duration.toNanos())
            }
            is RunEvent.NodeFailed -> {
                put("attempts", event.attempts)
                put("error", error(event.error, typeOf))
                put("durationNanos", event.duration.toNanos())
                event.routedTo?.let { put("routedTo", it) }
            }
            is RunEvent.NodeCompensated -> put("durationNanos", event.duration.toNanos())
            is RunEvent.NodeCompensationFailed -> {
                put("error", error(event.error, typeOf))
                put("durationNanos", event.duration.toNanos())
            }
            is RunEvent.Custom -> put("payload", event.payload.toString())
            is RunEvent.NodeCacheHit -> {
                put("attempt", event.attempt)
                put("key", event.key)
            }
            is RunEvent.NodeCacheStored -> {
                put("attempt", event.attempt)
                put("key", event.key)
                event.expiresAt?.let { put("expiresAt", it.toString()) }
            }
            is RunEvent.MetersCharged -> {
                put("charges", meters(event.charges))
                put("totals", meters(event.totals))
            }
            is RunEvent.EdgeTaken -> {
                put("from", event.from)
                put("to", event.to)
            }
            is RunEvent.CheckpointSaved -> {
                put("checkpoint", event.checkpoint)
                put("full", event.full)
            }
            is RunEvent.Terminal -> {
                if (event is RunEvent.RunFailed) put("error", error(event.error, typeOf))
                put("result", result(event.result, typeOf))
            }
        }
    }

    fun decode(json: JsonObject, schema: StateSchema, errorOf: (String, String) -> Throwable): RunEvent {
        val r = Reader(json, schema, errorOf)
        val run = r.text("runId")
        val sequence = r.long("sequence")
        val at = Instant.parse(r.text("timestamp"))
        val type = r.text("type")
        if (json.containsKey("nodeId")) {
            val head = EventHead(run, sequence, at, r.text("nodeId"), r.int("execution"), r.text("path"), r.int("task"))
            return when (type) {
                "NodeStarted" -> RunEvent.NodeStarted(head)
                "NodeRetrying" ->
                    RunEvent.NodeRetrying(
                        head,
                        r.int("attempt"),
                        r.error("error"),
                        Duration.ofNanos(r.long("delayNanos")),
                    )
                "NodeCompleted" -> RunEvent.NodeCompleted(head, r.int("attempts"), r.long("durationNanos"))
                "NodeFailed" -> RunEvent.NodeFailed(
                    head,
                    r.int("attempts"),
                    r.error("error"),
                    r.long("durationNanos"),
                    json["routedTo"]?.jsonPrimitive?.content,
                )
                "NodeCancelled" -> RunEvent.NodeCancelled(head)
                "NodeCompensating" -> RunEvent.NodeCompensating(head)
                "NodeCompensated" -> RunEvent.NodeCompensated(head, Duration.ofNanos(r.long("durationNanos")))
                "NodeCompensationFailed" ->
                    RunEvent.NodeCompensationFailed(head, r.error("error"), Duration.ofNanos(r.long("durationNanos")))
                "Custom" -> RunEvent.Custom(head, r.text("payload"))
                "NodeCacheHit" -> RunEvent.NodeCacheHit(head, r.int("attempt"), r.text("key"))
                "NodeCacheStored" -> RunEvent.NodeCacheStored(
                    head,
                    r.int("attempt"),
                    r.text("key"),
                    json["expiresAt"]?.jsonPrimitive?.content?.let(Instant::parse),
                )
                "MetersCharged" -> RunEvent.MetersCharged(head, r.meters("charges"), r.meters("totals"))
                else -> throw r.unknown(type)
            }
        }
        return when (type) {
            "RunStarted" -> RunEvent.RunStarted(run, sequence, at, r.text("graphId"), r.state(json.getValue("input")))
            "EdgeTaken" -> RunEvent.EdgeTaken(run, sequence, at, r.text("from"), r.text("to"))
            "CheckpointSaved" ->
                RunEvent.CheckpointSaved(
                    run,
                    sequence,
                    at,
                    r.long("checkpoint"),
                    json.getValue("full").jsonPrimitive.boolean,
                )
            "RunCompleted" -> RunEvent.RunCompleted(run, sequence, at, r.result(run))
            "RunFailed" -> RunEvent.RunFailed(run, sequence, at, r.error("error"), r.result(run))
            "RunCancelled" -> RunEvent.RunCancelled(run, sequence, at, r.result(run))
            "RunInterrupted" -> RunEvent.RunInterrupted(run, sequence, at, r.result(run))
            else -> throw r.unknown(type)
        }
    }

    private fun error(error: Throwable, typeOf: (Throwable) -> String): JsonObject = buildJsonObject {
        put("type", typeOf(error))
        put("message", error.message ?: "")
    }

    private fun meters(values: Map<String, Double>): JsonObject = buildJsonObject {
        for ((name, value) in values) put(name, value)
    }

    private fun state(state: State): JsonObject = buildJsonObject {
        for (key in state.schema.keys) {
            val value = state.getOrUnset(key)
            if (value !== State.Unset) put(key.name, PositionCodec.encodeValue(key, value))
        }
    }

    private fun result(result: RunResult, typeOf: (Throwable) -> String): JsonObject = buildJsonObject {
        put("graphId", result.graphId)
        put("status", result.status.name)
        put("state", state(result.state))
        put(
            "nodes",
            buildJsonObject {
                for ((id, node) in result.nodes) {
                    put(
                        id,
                        buildJsonObject {
                            put("status", node.status.name)
                            put("executions", node.executions)
                            put("attempts", node.attempts)
                            put("durationNanos", node.duration.toNanos())
                            node.error?.let { put("error", error(it, typeOf)) }
                        },
                    )
                }
            },
        )
        put("durationNanos", result.duration.toNanos())
        put("errors", buildJsonArray { for (e in result.errors) add(error(e, typeOf)) })
        put(
            "interrupts",
            buildJsonArray {
                for (i in result.interrupts) {
                    add(
                        buildJsonObject {
                            put("nodeId", i.nodeId)
                            put("path", i.path)
                            put("payload", i.payload)
                        },
                    )
                }
            },
        )
        put("meters", meters(result.meters))
    }

    /** Reads the fields of one encoded event, with a clear error for a missing or malformed one. */
    private class Reader(
        private val json: JsonObject,
        private val schema: StateSchema,
        private val errorOf: (String, String) -> Throwable,
    ) {
        private fun field(name: String, from: JsonObject = json): JsonElement = from[name]?.takeIf { it != JsonNull }
            ?: throw IllegalArgumentException("The encoded run event has no '$name': $json")

        fun text(name: String, from: JsonObject = json): String = field(name, from).jsonPrimitive.content

        fun int(name: String, from: JsonObject = json): Int = field(name, from).jsonPrimitive.int

        fun long(name: String, from: JsonObject = json): Long = field(name, from).jsonPrimitive.long

        fun error(name: String, from: JsonObject = json): Throwable {
            val e = field(name, from).jsonObject
            return errorOf(text("type", e), text("message", e))
        }

        fun meters(name: String, from: JsonObject = json): Map<String, Double> =
            field(name, from).jsonObject.mapValuesTo(LinkedHashMap()) { it.value.jsonPrimitive.double }

        fun unknown(type: String) = IllegalArgumentException("Unknown run event type '$type': $json")

        fun state(element: JsonElement): State {
            var state = schema.initialState()
            for ((name, value) in element.jsonObject) {
                val key = schema.keyOrNull(name) ?: throw IllegalArgumentException(
                    "The encoded run event holds state key '$name', which schema '${schema.name}' does not have: " +
                        "decode it with the graph (and version) of the run that made it.",
                )
                @Suppress("UNCHECKED_CAST")
                state = state.with(key as StateKey<Any?>, PositionCodec.decodeValue(key, value, "run event"))
            }
            return state
        }

        fun result(runId: String): RunResult {
            val r = field("result").jsonObject
            val nodes = LinkedHashMap<String, NodeResult>()
            for ((id, element) in field("nodes", r).jsonObject) {
                val n = element.jsonObject
                nodes[id] = NodeResult(
                    id,
                    Status.valueOf(text("status", n)),
                    int("executions", n),
                    int("attempts", n),
                    Duration.ofNanos(long("durationNanos", n)),
                    n["error"]?.let { error("error", n) },
                )
            }
            val interrupts = field("interrupts", r).jsonArray.map {
                val i = it.jsonObject
                Interrupt(text("nodeId", i), text("payload", i), text("path", i))
            }
            val errors = field(
                "errors",
                r,
            ).jsonArray.map { errorOf(text("type", it.jsonObject), text("message", it.jsonObject)) }
            return RunResult(
                runId,
                text("graphId", r),
                Status.valueOf(text("status", r)),
                state(field("state", r)),
                Decoded(nodes),
                Duration.ofNanos(long("durationNanos", r)),
                errors,
                interrupts,
                meters = meters("meters", r),
            )
        }
    }

    /** The details of a decoded result: its nodes' results, and no execution list (it does not cross processes). */
    private class Decoded(private val nodes: Map<String, NodeResult>) : RunDetails {
        override val droppedExecutions: Long get() = 0

        override fun nodes(): Map<String, NodeResult> = nodes

        override fun executions(): List<NodeExecution> = emptyList()
    }
}
