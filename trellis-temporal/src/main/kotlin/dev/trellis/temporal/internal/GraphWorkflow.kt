package dev.trellis.temporal.internal

import dev.trellis.graph.Graph
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.start
import dev.trellis.temporal.TemporalOptions
import io.temporal.failure.ApplicationFailure
import io.temporal.failure.CanceledFailure
import io.temporal.workflow.QueryMethod
import io.temporal.workflow.Workflow
import io.temporal.workflow.WorkflowInterface
import io.temporal.workflow.WorkflowMethod
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlin.random.asKotlinRandom

/** The workflow of a Trellis run: input and result are JSON texts (see [RunCodec]). */
@WorkflowInterface
internal interface GraphWorkflow {
    @WorkflowMethod(name = "TrellisGraph")
    fun run(request: String): String

    /** The run's result once it ended (also for a cancelled workflow, whose result Temporal drops), else null. */
    @QueryMethod(name = "result")
    fun result(): String?

    /** The run's progress: the last event of each node path, and the number of events so far. */
    @QueryMethod(name = "progress")
    fun progress(): String
}

/**
 * Runs the unchanged engine on the workflow thread with a [WorkflowDispatcher], Temporal's clock and random source,
 * and [ActivityNodes] turning each plain node attempt into an activity. A cancelled workflow cancels the run, which
 * unwinds as locally (status CANCELLED); the workflow then completes with that result.
 */
internal class GraphWorkflowImpl(
    private val graphs: Map<String, Graph>,
    private val options: TemporalOptions,
) : GraphWorkflow {
    private val lastEvent = LinkedHashMap<String, String>()
    private var events = 0
    private var encoded: String? = null

    override fun run(request: String): String {
        val req = Payloads.json.parseToJsonElement(request).jsonObject
        val graphId = req.getValue("graph").jsonPrimitive.content
        val graph = graphs[graphId] ?: throw ApplicationFailure.newNonRetryableFailure(
            "This worker has no graph '$graphId'; register it with TemporalWorkers.register on every worker of the task queue.",
            "UnknownGraph",
        )
        val input = Payloads.decodeState(graph.schema, req.getValue("input").jsonObject)
        val dispatcher = WorkflowDispatcher()
        val scope = CoroutineScope(dispatcher + Job())
        val runOptions = RunOptions(
            runId = Workflow.getInfo().workflowId,
            dispatcher = dispatcher,
            clock = WorkflowClock,
            timeSource = WorkflowTimeSource,
            random = Workflow.newRandom().asKotlinRandom(),
            interceptors = listOf(ActivityNodes(graphId, options)),
        )
        val handle = graph.start(scope, input, runOptions) { event -> record(event) }
        try {
            drive(dispatcher) { handle.isDone }
        } catch (e: CanceledFailure) {
            Workflow.newDetachedCancellationScope {
                handle.cancel()
                drive(dispatcher) { handle.isDone }
            }.run()
        }
        @Suppress("OPT_IN_USAGE")
        val result: RunResult = handle.result.getCompletionExceptionOrNull().let { error ->
            when (error) {
                null -> handle.result.getCompleted()
                is GraphRunException -> error.result
                else -> throw error
            }
        }
        // A cancelled workflow closes CANCELED whatever it returns: the result query still answers.
        return RunCodec.encodeResult(result).toString().also { encoded = it }
    }

    private fun drive(dispatcher: WorkflowDispatcher, done: () -> Boolean) {
        while (true) {
            dispatcher.drain()
            if (done()) return
            Workflow.await { dispatcher.hasWork() }
        }
    }

    private fun record(event: RunEvent) {
        events++
        if (event is RunEvent.NodeEvent) lastEvent[event.path] = event.javaClass.simpleName
    }

    override fun result(): String? = encoded

    override fun progress(): String = JsonObject(
        mapOf(
            "events" to JsonPrimitive(events),
            "nodes" to JsonObject(lastEvent.mapValues { JsonPrimitive(it.value) }),
        ),
    ).toString()
}
