package dev.trellis.temporal.internal

import dev.trellis.graph.Composite
import dev.trellis.graph.Graph
import dev.trellis.graph.SliceViolationException
import dev.trellis.graph.StateKey
import dev.trellis.temporal.LiveEvents
import io.temporal.activity.ActivityInterface
import io.temporal.activity.ActivityMethod
import io.temporal.failure.ApplicationFailure
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.util.TreeMap

/** The activity that runs one attempt of one node: request and response are JSON texts (see [NodeActivityImpl]). */
@ActivityInterface
internal interface NodeActivity {
    @ActivityMethod(name = TYPE)
    fun runNode(request: String): String

    companion object {
        /** The activity type of node attempts. */
        const val TYPE: String = "TrellisNode"

        /** The first detail of a failure raised by the node scope's own checks: the workflow rebuilds the error. */
        const val SCOPE_ERROR: String = "trellis-scope"

        /** The prefix of a failure's last detail: the failed attempt's charges as JSON (`[["usd",0.25]]`). */
        const val CHARGES: String = "trellis-charges:"
    }
}

/**
 * Runs a node's body on the activity worker with only its node's state slice ([ActivityNodeScope], the runtime's
 * rules), and answers its write set (each value encoded with its key's serializer, refused above [maxValueBytes]),
 * its charges, the payloads it emitted, or the payload of its interrupt. A node's exception fails the activity with
 * a non-retryable `ApplicationFailure` of the exception's class name: Trellis's retry policy, in the workflow,
 * decides whether the node runs again. Emitted payloads also go to [live] at once, when there is one.
 */
internal class NodeActivityImpl(
    private val graphs: Map<String, TreeMap<Int, Graph>>,
    private val maxValueBytes: Int,
    private val live: LiveEvents?,
    private val onExecution: (String) -> Unit,
    private val heartbeats: Heartbeats = Heartbeats(),
) : NodeActivity {
    override fun runNode(request: String): String {
        val req = Payloads.json.parseToJsonElement(request).jsonObject
        val graphId = req.getValue("graph").jsonPrimitive.content
        val path = req.getValue("path").jsonPrimitive.content
        val version = req["version"]?.jsonPrimitive?.int ?: 1
        val graph = graphs[graphId]?.get(version) ?: throw ApplicationFailure.newFailure(
            "This worker has no version $version of graph '$graphId'; register it (GraphVersions) on every worker " +
                "of the task queue while runs of it are in flight.",
            "UnknownGraph",
        )
        val node = Payloads.resolve(graph, path)
        val nodeGraph = graphOf(graph, path)
        val input = Payloads.decodeState(nodeGraph.schema, req.getValue("state").jsonObject)
        val runId = req.getValue("run").jsonPrimitive.content
        val attempt = req.getValue("attempt").jsonPrimitive.int
        val execution = req.getValue("execution").jsonPrimitive.int
        val answer = req["answer"]?.takeIf { it != JsonNull }?.jsonPrimitive?.content
        val firstIndex = req["emittedBefore"]?.jsonPrimitive?.int ?: 0
        val scope = ActivityNodeScope(runId, node, attempt, execution, input, answer, firstIndex) { index, payload ->
            live?.let { LiveCustom.publish(it, runId, node.id, path, execution, attempt, index, payload) }
        }
        // A map task (`summarize[3]`) runs the map's body with its item, sent as a one-item list of the `over` key.
        val task = (node.composite as? Composite.Map)?.body?.takeIf { req.containsKey("item") }
        val item = req["item"]?.let { (Payloads.decode((node.composite as Composite.Map).over, it) as List<*>)[0] }
        onExecution(path)
        var interrupt: String? = null
        val failure: Throwable? = try {
            heartbeats.around { if (task != null) task.invoke(scope, item) else node.body.invoke(scope) }
            scope.violation
        } catch (e: InterruptedException) {
            // The worker is shutting down: not the node's failure; Temporal runs the attempt again on another worker.
            throw ApplicationFailure.newFailure("The worker running node '$path' stopped mid-attempt.", "WorkerStopped")
        } catch (e: ActivityInterrupt) {
            interrupt = e.payload
            scope.violation
        } catch (e: Exception) {
            scope.violation ?: e
        }
        if (failure != null) throw failureOf(failure, scope)
        val emitted = JsonArray(scope.emitted.map { JsonPrimitive(it.toString()) })
        if (interrupt != null) {
            val asked =
                mapOf("interrupt" to JsonPrimitive(interrupt), "emitted" to emitted, "charges" to charges(scope))
            return JsonObject(asked).toString()
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
                "charges" to charges(scope),
                "emitted" to emitted,
            ),
        ).toString()
    }

    private fun charges(scope: ActivityNodeScope): JsonArray =
        JsonArray(scope.charges.map { JsonArray(listOf(JsonPrimitive(it.first), JsonPrimitive(it.second))) })

    /**
     * The activity's failure for the attempt's [error]: the scope's own errors carry what rebuilds them, and the last
     * detail is the attempt's charges (they count, `docs/semantics.md` §13.4), as [NodeActivity.CHARGES] + JSON.
     */
    private fun failureOf(error: Throwable, scope: ActivityNodeScope): ApplicationFailure {
        val message = error.message ?: error.toString()
        val charges = NodeActivity.CHARGES + charges(scope)
        return when {
            error is SliceViolationException -> ApplicationFailure.newNonRetryableFailure(
                message,
                SliceViolationException::class.java.name,
                NodeActivity.SCOPE_ERROR,
                error.key.name,
                error.access.name,
                charges,
            )
            error === scope.refusal -> ApplicationFailure.newNonRetryableFailure(
                message,
                IllegalArgumentException::class.java.name,
                NodeActivity.SCOPE_ERROR,
                charges,
            )
            else -> ApplicationFailure.newNonRetryableFailure(message, error.javaClass.name, charges)
        }
    }

    private fun graphOf(graph: Graph, path: String): Graph {
        val parent = path.substringBeforeLast('/', "")
        return if (parent.isEmpty()) graph else Payloads.resolve(graph, parent).subgraph!!
    }
}

/** Reads back an activity's response: the writes (by key of the schema), charges, emitted payloads or interrupt. */
internal class NodeResponse(response: String, schemaKeys: (String) -> StateKey<*>) {
    private val obj = Payloads.json.parseToJsonElement(response).jsonObject

    /** The payload of the node's interrupt, when it asked for input (then it wrote nothing). */
    val interrupt: String? = obj["interrupt"]?.jsonPrimitive?.content
    val keys: List<StateKey<*>>
    val values: List<Any?>

    init {
        val writes = obj["writes"]?.jsonArray.orEmpty()
        keys = writes.map { schemaKeys(it.jsonArray[0].jsonPrimitive.content) }
        values = writes.mapIndexed { i, w -> Payloads.decode(keys[i], w.jsonArray[1]) }
    }

    val charges: List<Pair<String, Double>> = chargesOf(obj["charges"]?.jsonArray.orEmpty())
    val emitted: List<String> = obj["emitted"]?.jsonArray.orEmpty().map { it.jsonPrimitive.content }
}

/** Charges as the activity sends them: `[["usd",0.25],["tokens",1200.0]]`. */
internal fun chargesOf(charges: List<JsonElement>): List<Pair<String, Double>> = charges.map { charge ->
    charge.jsonArray[0].jsonPrimitive.content to charge.jsonArray[1].jsonPrimitive.content.toDouble()
}
