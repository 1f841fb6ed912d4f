package dev.trellis.functional

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.double
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import java.math.BigDecimal
import java.time.Instant
import java.time.Duration as JavaDuration

/**
 * The durable record of one workflow run in a checkpoint store (`docs/semantics.md` §14): one store run whose
 * records are, in order, the input, a `start` before each task runs, a `done` with its result (and what it charged)
 * after, an `interrupt` with its payload and an `answer` for each question asked, and the `output` at the end. The
 * journal holds the run's lease while it is open; every record is appended under it (a fenced-out process cannot
 * record).
 */
internal class Journal private constructor(
    /** The store the run is recorded in. */
    val store: CheckpointStore,
    val runId: String,
    private val workflowId: String,
    private var lease: Lease,
) {
    private val mutex = Mutex()
    private var sequence = 0L
    private val started = HashMap<Int, String>()
    private val done = HashMap<Int, JsonElement>()
    private val asked = HashMap<Int, Question>()
    private val answers = HashMap<Int, String>()
    private val totals = LinkedHashMap<String, BigDecimal>()

    /** The recorded input, null before the first record. */
    var input: JsonElement? = null
        private set

    /** The recorded output, null until the run completed. */
    var output: JsonElement? = null
        private set

    /** How many steps (tasks and interrupts) the run recorded as started. */
    val startedCount: Int get() = started.size

    /** The name recorded at [position], or null. */
    fun startedAt(position: Int): String? = started[position]

    /** The recorded result at [position], or null when that step did not complete. */
    fun doneAt(position: Int): JsonElement? = done[position]

    /** The recorded answer to the interrupt at [position], or null. */
    fun answerAt(position: Int): String? = answers[position]

    /** The position of the interrupt that waits for an answer, or null. */
    val pendingInterrupt: Int? get() = asked.keys.firstOrNull { it !in answers }

    /** The payload of the interrupt at [position]. */
    fun questionAt(position: Int): String? = asked[position]?.payload

    /** The latest question asked at [position] (a graph task's child run may ask several, one at a time), or null. */
    fun question(position: Int): Question? = asked[position]

    /** The owner of the run's lease. */
    val owner: String = lease.owner

    /** What the completed steps charged, by meter, in the order meters were first charged (exact decimals). */
    fun totals(): Map<String, BigDecimal> = synchronized(totals) { LinkedHashMap(totals) }

    private fun read(record: CheckpointRecord) {
        sequence = record.sequence
        val payload = Json.parseToJsonElement(record.payload).jsonObject
        when (payload.getValue("type").jsonPrimitive.content) {
            "input" -> input = payload.getValue("value")
            "start" -> started[payload.position] = payload.name
            "done" -> {
                done[payload.position] = payload.getValue("value")
                payload["charges"]?.jsonObject?.forEach { (meter, amount) -> add(meter, amount.jsonPrimitive.double) }
            }
            "interrupt" -> {
                started[payload.position] = payload["name"]?.jsonPrimitive?.content ?: INTERRUPT
                asked[payload.position] = Question(
                    payload.getValue("payload").jsonPrimitive.content,
                    payload["node"]?.jsonPrimitive?.content,
                    payload["childSequence"]?.jsonPrimitive?.long,
                )
                answers.remove(payload.position) // a new question at a position waits for a new answer
            }
            "answer" -> answers[payload.position] = payload.getValue("value").jsonPrimitive.content
            "output" -> output = payload.getValue("value")
        }
    }

    private fun add(meter: String, amount: Double) = synchronized(totals) {
        totals[meter] = (totals[meter] ?: BigDecimal.ZERO).add(BigDecimal.valueOf(amount))
    }

    private val JsonObject.position: Int get() = getValue("position").jsonPrimitive.int
    private val JsonObject.name: String get() = getValue("name").jsonPrimitive.content

    suspend fun recordInput(value: JsonElement) {
        append("RUNNING", entry("input") { put("value", value) })
        input = value
    }

    suspend fun recordStart(position: Int, name: String) {
        append(
            "RUNNING",
            entry("start") {
                put("position", JsonPrimitive(position))
                put("name", JsonPrimitive(name))
            },
        )
        started[position] = name
    }

    suspend fun recordDone(position: Int, name: String, value: JsonElement, charges: Map<String, Double>) {
        append(
            "RUNNING",
            entry("done") {
                put("position", JsonPrimitive(position))
                put("name", JsonPrimitive(name))
                put("value", value)
                if (charges.isNotEmpty()) put("charges", JsonObject(charges.mapValues { JsonPrimitive(it.value) }))
            },
        )
        done[position] = value
        charges.forEach { (meter, amount) -> add(meter, amount) }
    }

    /**
     * Records the question [payload] asked at [position]: by the workflow's own `interrupt`, or by the child run of
     * graph task [name] (its interrupt's [node] path and the [childSequence] of its checkpoint that asks).
     */
    suspend fun recordInterrupt(
        position: Int,
        payload: String,
        name: String = INTERRUPT,
        node: String? = null,
        childSequence: Long? = null,
    ) {
        append(
            "INTERRUPTED",
            entry("interrupt") {
                put("position", JsonPrimitive(position))
                put("payload", JsonPrimitive(payload))
                if (name != INTERRUPT) put("name", JsonPrimitive(name))
                if (node != null) put("node", JsonPrimitive(node))
                if (childSequence != null) put("childSequence", JsonPrimitive(childSequence))
            },
        )
        started[position] = name
        asked[position] = Question(payload, node, childSequence)
        answers.remove(position)
    }

    suspend fun recordAnswer(position: Int, answer: String) {
        append(
            "RUNNING",
            entry("answer") {
                put("position", JsonPrimitive(position))
                put("value", JsonPrimitive(answer))
            },
        )
        answers[position] = answer
    }

    suspend fun recordOutput(value: JsonElement) {
        append("COMPLETED", entry("output") { put("value", value) })
        output = value
    }

    private inline fun entry(type: String, fill: MutableMap<String, JsonElement>.() -> Unit): JsonObject =
        JsonObject(
            LinkedHashMap<String, JsonElement>().apply {
                put("type", JsonPrimitive(type))
                fill()
            },
        )

    private suspend fun append(status: String, payload: JsonObject) = mutex.withLock {
        val next = sequence + 1
        val record = CheckpointRecord(
            runId,
            next,
            if (next == 1L) null else next - 1,
            workflowId,
            FORMAT,
            Instant.now(),
            status,
            CheckpointRecord.Kind.FULL,
            payload.toString(),
        )
        lease = store.renew(lease)
        store.append(lease, record)
        sequence = next
    }

    /**
     * Renews the run's lease until cancelled, when half of its time is left, so that a long task does not let another
     * process take the run over; a lease taken over ends this with `FencedOutException`.
     */
    suspend fun keepAlive() {
        while (true) {
            val left = JavaDuration.between(Instant.now(), mutex.withLock { lease }.expiresAt).toMillis()
            delay(maxOf(MIN_RENEWAL_MILLIS, left / 2))
            mutex.withLock { lease = store.renew(lease) }
        }
    }

    /** Runs [block] with the lease kept alive ([keepAlive]) while it runs. */
    suspend fun <T> alive(block: suspend () -> T): T = coroutineScope {
        val renewal = launch { keepAlive() }
        try {
            block()
        } finally {
            renewal.cancel()
        }
    }

    /** Gives up the run's lease. */
    suspend fun close() {
        store.release(lease)
    }

    companion object {
        /** The version of the records' payload format. */
        const val FORMAT: Int = 1

        private const val MIN_RENEWAL_MILLIS = 50L

        /** The name an interrupt has as a step. */
        const val INTERRUPT: String = "interrupt"

        private val Json = kotlinx.serialization.json.Json

        /** Claims run [runId] of [store] for [owner] and reads what it recorded. */
        suspend fun open(store: CheckpointStore, runId: String, owner: String, workflowId: String): Journal {
            val lease = store.claim(runId, owner)
            val journal = Journal(store, runId, workflowId, lease)
            try {
                for (record in store.history(runId)) journal.read(record)
            } catch (e: Throwable) {
                store.release(lease)
                throw e
            }
            return journal
        }
    }
}

/**
 * A question a run asked at a position: its [payload]; for a graph task's child run, also the [node] path of the
 * child's interrupt (the key of its answer) and the [childSequence] of the child's checkpoint that asks it.
 */
internal class Question(val payload: String, val node: String?, val childSequence: Long?)
