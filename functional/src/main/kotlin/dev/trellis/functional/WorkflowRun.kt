package dev.trellis.functional

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.time.Instant
import java.util.concurrent.atomic.AtomicInteger

/**
 * One execution of a workflow run: claims the run, reads what it recorded, runs the body with a scope that replays
 * recorded tasks and records new ones (a `start` record before a task runs, a `done` record with its result after).
 */
internal class WorkflowRun<I, O>(
    private val workflow: Workflow<I, O>,
    private val store: CheckpointStore,
    private val runId: String,
    private val owner: String,
) {
    private val json = Json
    private val mutex = Mutex()
    private lateinit var lease: Lease
    private var sequence = 0L
    private val started = HashMap<Int, String>()
    private val done = HashMap<Int, JsonElement>()
    private var recordedInput: JsonElement? = null
    private var recordedOutput: JsonElement? = null

    suspend fun execute(input: I): O {
        lease = store.claim(runId, owner)
        try {
            for (record in store.history(runId)) read(record)
            recordedOutput?.let { return json.decodeFromJsonElement(workflow.output, it) }
            val actualInput = recordedInput?.let { json.decodeFromJsonElement(workflow.input, it) } ?: input.also {
                append(
                    "RUNNING",
                    buildJsonObject {
                        put("type", JsonPrimitive("input"))
                        put("value", json.encodeToJsonElement(workflow.input, it))
                    },
                )
            }
            val calls = AtomicInteger()
            val output = coroutineScope { Scope(this, calls).let { workflow.body(it, actualInput) } }
            if (calls.get() < started.size) {
                throw WorkflowNondeterminismException(
                    runId,
                    calls.get(),
                    "Run '$runId' of workflow '${workflow.id}' recorded ${started.size} tasks, but the code now " +
                        "calls " +
                        "only ${calls.get()} (the first one missing is '${started[calls.get()]}' at position " +
                        "${calls.get()}); the code changed since the run started. Finish it with the code it started " +
                        "with, or start a new run.",
                )
            }
            append(
                "COMPLETED",
                buildJsonObject {
                    put("type", JsonPrimitive("output"))
                    put("value", json.encodeToJsonElement(workflow.output, output))
                },
            )
            return output
        } finally {
            store.release(lease)
        }
    }

    private fun read(record: CheckpointRecord) {
        sequence = record.sequence
        val payload = json.parseToJsonElement(record.payload).jsonObject
        when (payload.getValue("type").jsonPrimitive.content) {
            "input" -> recordedInput = payload.getValue("value")
            "start" -> started[payload.position] = payload.getValue("name").jsonPrimitive.content
            "done" -> done[payload.position] = payload.getValue("value")
            "output" -> recordedOutput = payload.getValue("value")
        }
    }

    private val JsonObject.position: Int get() = getValue("position").jsonPrimitive.int

    private suspend fun append(status: String, payload: JsonObject) = mutex.withLock {
        sequence++
        val record = CheckpointRecord(
            runId,
            sequence,
            if (sequence == 1L) null else sequence - 1,
            workflow.id,
            FORMAT,
            Instant.now(),
            status,
            CheckpointRecord.Kind.FULL,
            payload.toString(),
        )
        lease = store.renew(lease)
        store.append(lease, record)
    }

    /** The scope of the body: positions are taken in call order, synchronously, also for parallel tasks. */
    private inner class Scope(private val scope: CoroutineScope, private val calls: AtomicInteger) : WorkflowScope {
        override val runId: String get() = this@WorkflowRun.runId

        override suspend fun <T> task(name: String, serializer: KSerializer<T>, block: suspend () -> T): T =
            runTask(calls.getAndIncrement(), name, serializer, block)

        override fun <T> taskAsync(name: String, serializer: KSerializer<T>, block: suspend () -> T): Deferred<T> {
            val position = calls.getAndIncrement()
            return scope.async(start = CoroutineStart.DEFAULT) { runTask(position, name, serializer, block) }
        }
    }

    private suspend fun <T> runTask(
        position: Int,
        name: String,
        serializer: KSerializer<T>,
        block: suspend () -> T,
    ): T {
        val recorded = started[position]
        if (recorded != null && recorded != name) {
            throw WorkflowNondeterminismException(
                runId,
                position,
                "Run '$runId' of workflow '${workflow.id}' recorded task '$recorded' at position $position, but the " +
                    "code now calls '$name' there; the code changed since the run started. Finish the run with the " +
                    "code it started with, or start a new run (task identity is call order plus name).",
            )
        }
        done[position]?.let { return json.decodeFromJsonElement(serializer, it) }
        if (recorded == null) {
            append(
                "RUNNING",
                buildJsonObject {
                    put("type", JsonPrimitive("start"))
                    put("position", JsonPrimitive(position))
                    put("name", JsonPrimitive(name))
                },
            )
        }
        val result = block()
        append(
            "RUNNING",
            buildJsonObject {
                put("type", JsonPrimitive("done"))
                put("position", JsonPrimitive(position))
                put("name", JsonPrimitive(name))
                put("value", json.encodeToJsonElement(serializer, result))
            },
        )
        return result
    }

    companion object {
        /** The version of the records' payload format. */
        const val FORMAT: Int = 1
    }
}
