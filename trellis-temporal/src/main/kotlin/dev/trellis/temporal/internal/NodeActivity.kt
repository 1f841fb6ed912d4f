package dev.trellis.temporal.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.NodeScope
import dev.trellis.graph.State
import dev.trellis.graph.StateKey
import io.temporal.activity.ActivityInterface
import io.temporal.activity.ActivityMethod
import io.temporal.failure.ApplicationFailure
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/** The activity that runs one attempt of one node: request and response are JSON texts (see [NodeActivityImpl]). */
@ActivityInterface
internal interface NodeActivity {
    @ActivityMethod(name = TYPE)
    fun runNode(request: String): String

    companion object {
        /** The activity type of node attempts. */
        const val TYPE: String = "TrellisNode"
    }
}

/**
 * Runs a node's body on the activity worker with only its node's state slice, and answers its write set (each
 * value encoded with its key's serializer, refused above [maxValueBytes]), its meters and the payloads it emitted.
 * A node's exception fails the activity with a non-retryable `ApplicationFailure` of the exception's class name:
 * Trellis's retry policy, in the workflow, decides whether the node runs again.
 */
internal class NodeActivityImpl(
    private val graphs: Map<String, Graph>,
    private val maxValueBytes: Int,
    private val onExecution: (String) -> Unit,
) : NodeActivity {
    override fun runNode(request: String): String {
        val req = Payloads.json.parseToJsonElement(request).jsonObject
        val graphId = req.getValue("graph").jsonPrimitive.content
        val path = req.getValue("path").jsonPrimitive.content
        val graph = graphs[graphId] ?: throw ApplicationFailure.newNonRetryableFailure(
            "This worker has no graph '$graphId'; register it with TemporalWorkers.register on every worker of the task queue.",
            "UnknownGraph",
        )
        val node = Payloads.resolve(graph, path)
        val nodeGraph = graphOf(graph, path)
        val input = Payloads.decodeState(nodeGraph.schema, req.getValue("state").jsonObject)
        val scope = ActivityNodeScope(
            req.getValue("run").jsonPrimitive.content,
            node.id,
            req.getValue("attempt").jsonPrimitive.int,
            req.getValue("execution").jsonPrimitive.int,
            input,
        )
        onExecution(path)
        try {
            runBlocking { node.body.invoke(scope) }
        } catch (e: InterruptedException) {
            // The worker is shutting down: not the node's failure; Temporal runs the attempt again on another worker.
            throw ApplicationFailure.newFailure("The worker running node '$path' stopped mid-attempt.", "WorkerStopped")
        } catch (e: Exception) {
            throw ApplicationFailure.newNonRetryableFailure(e.message ?: e.toString(), e.javaClass.name)
        }
        val writes = scope.keys.indices.map { i ->
            val key = scope.keys[i]
            val encoded = Payloads.encode(key, scope.values[i])
            val size = encoded.toString().length
            if (size > maxValueBytes) {
                throw ApplicationFailure.newNonRetryableFailure(
                    "Node '$path' wrote $size bytes to state key '${key.name}', over the bound of $maxValueBytes " +
                        "bytes per value (TemporalOptions.maxValueBytes); keep large values outside the state " +
                        "(a reference to a blob store) or raise the bound, below Temporal's 2 MB payload limit.",
                    "PayloadTooLarge",
                )
            }
            JsonArray(listOf(JsonPrimitive(key.name), encoded))
        }
        return JsonObject(
            mapOf(
                "writes" to JsonArray(writes),
                "meters" to JsonObject(scope.meters.mapValues { JsonPrimitive(it.value) }),
                "emitted" to JsonArray(scope.emitted.map { JsonPrimitive(it.toString()) }),
            ),
        ).toString()
    }

    private fun graphOf(graph: Graph, path: String): Graph {
        val parent = path.substringBeforeLast('/', "")
        return if (parent.isEmpty()) graph else Payloads.resolve(graph, parent).subgraph!!
    }
}

/** Reads back an activity's response: the writes (by key of [schema]), meters and emitted payloads. */
internal class NodeResponse(response: String, schemaKeys: (String) -> StateKey<*>) {
    private val obj = Payloads.json.parseToJsonElement(response).jsonObject
    val keys: List<StateKey<*>>
    val values: List<Any?>

    init {
        val writes = obj.getValue("writes").jsonArray
        keys = writes.map { schemaKeys(it.jsonArray[0].jsonPrimitive.content) }
        values = writes.mapIndexed { i, w -> Payloads.decode(keys[i], w.jsonArray[1]) }
    }

    val meters: Map<String, Double> =
        obj.getValue("meters").jsonObject.mapValues { it.value.jsonPrimitive.content.toDouble() }
    val emitted: List<String> = obj.getValue("emitted").jsonArray.map { it.jsonPrimitive.content }
}

/** The [NodeScope] of a node body run by the activity: reads its slice, records its writes. */
private class ActivityNodeScope(
    override val runId: String,
    override val nodeId: String,
    override val attempt: Int,
    override val executionCount: Int,
    override val state: State,
) : NodeScope {
    val keys = ArrayList<StateKey<*>>()
    val values = ArrayList<Any?>()
    val meters = LinkedHashMap<String, Double>()
    val emitted = ArrayList<Any>()

    override fun <T> get(key: StateKey<T>): T {
        var value: Any? = state.getOrUnset(key)
        val reducer = key.reducer
        for (i in keys.indices) {
            if (keys[i] != key) continue
            @Suppress("UNCHECKED_CAST")
            value =
                if (reducer == null || value === State.Unset) values[i] else reducer.reduce(value as T, values[i] as T)
        }
        return if (value === State.Unset) state[key] else key.cast(value)
    }

    override fun <T> set(key: StateKey<T>, value: T) {
        require(key.schema === state.schema) {
            "Node '$nodeId' wrote key '${key.name}' of schema '${key.schema.name}', but this graph's schema is '${state.schema.name}'."
        }
        keys += key
        values += value
    }

    override fun <T> update(key: StateKey<T>, transform: (T) -> T) {
        require(key.reducer == null) {
            "update() replaces a value, but state key '${key.name}' has reducer ${key.reducer}; use set(${key.name}, update) to fold an update into it."
        }
        set(key, transform(get(key)))
    }

    override suspend fun emit(payload: Any) {
        emitted += payload
    }

    override fun charge(meter: String, amount: Double) {
        require(meter.isNotBlank() && amount >= 0 && amount.isFinite()) {
            "charge($meter, $amount): the meter must not be blank and the amount must be finite and not negative."
        }
        meters[meter] = (meters[meter] ?: 0.0) + amount
    }

    override fun interrupt(payload: String): String = throw UnsupportedOperationException(
        "Node '$nodeId' called interrupt(), which trellis-temporal does not support yet; run this graph with the " +
            "local runtime or the PostgreSQL fleet.",
    )
}
