package dev.trellis.temporal.internal

import dev.trellis.graph.Graph
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.start
import dev.trellis.temporal.LiveEvent
import dev.trellis.temporal.TemporalOptions
import io.temporal.failure.ApplicationFailure
import io.temporal.failure.CanceledFailure
import io.temporal.workflow.QueryMethod
import io.temporal.workflow.UpdateMethod
import io.temporal.workflow.UpdateValidatorMethod
import io.temporal.workflow.Workflow
import io.temporal.workflow.WorkflowInterface
import io.temporal.workflow.WorkflowMethod
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.util.TreeMap
import kotlin.random.asKotlinRandom

/** The workflow of a Trellis run: input and result are JSON texts (see [RunCodec]). */
@WorkflowInterface
internal interface GraphWorkflow {
    @WorkflowMethod(name = "TrellisGraph")
    fun run(request: String): String

    /** The run's result once it ended (also for a cancelled workflow, whose result Temporal drops), else null. */
    @QueryMethod(name = "result")
    fun result(): String?

    /** The run's progress: the last event of each node path, the number of events so far, pending interrupts. */
    @QueryMethod(name = "progress")
    fun progress(): String

    /** The pending interrupts as JSON: node path to payload. */
    @QueryMethod(name = "interrupts")
    fun interrupts(): String

    /** Answers the pending interrupt [interruptId]: its node runs again, and its `interrupt` call returns [answer]. */
    @UpdateMethod(name = "answer")
    fun answer(interruptId: String, answer: String)

    /** Rejects an answer to an interrupt that is not pending (the Update then leaves no trace in the history). */
    @UpdateValidatorMethod(updateName = "answer")
    fun validateAnswer(interruptId: String, answer: String)
}

/**
 * Runs the unchanged engine on the workflow thread with a [WorkflowDispatcher], Temporal's clock and random source,
 * and [ActivityNodes] turning each plain node attempt into an activity. A cancelled workflow cancels the run, which
 * unwinds as locally (status CANCELLED); the workflow then completes with that result.
 */
internal class GraphWorkflowImpl(
    private val graphs: Map<String, TreeMap<Int, Graph>>,
    private val options: TemporalOptions,
) : GraphWorkflow {
    private val lastEvent = LinkedHashMap<String, String>()
    private var events = 0
    private var encoded: String? = null
    private var interrupts: PendingInterrupts? = null
    private var keys: LiveKeys? = null

    override fun run(request: String): String {
        val req = Payloads.json.parseToJsonElement(request).jsonObject
        val graphId = req.getValue("graph").jsonPrimitive.content
        val versions = graphs[graphId] ?: throw ApplicationFailure.newNonRetryableFailure(
            "This worker has no graph '$graphId'; register it with TemporalWorkers.register on every worker of the task queue.",
            "UnknownGraph",
        )
        val version = GraphVersioning.version(graphId, versions)
        val graph = versions.getValue(version)
        val input = Payloads.decodeState(graph.schema, req.getValue("input").jsonObject)
        val runId = Workflow.getInfo().workflowId
        val pending = PendingInterrupts(runId).also { interrupts = it }
        val liveKeys = LiveKeys(runId).also { keys = it }
        val dispatcher = WorkflowDispatcher()
        val scope = CoroutineScope(dispatcher + Job())
        val runOptions = RunOptions(
            runId = runId,
            dispatcher = dispatcher,
            clock = WorkflowClock,
            timeSource = WorkflowTimeSource,
            random = Workflow.newRandom().asKotlinRandom(),
            interceptors = listOf(ActivityNodes(graphId, version, options, pending, liveKeys)),
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
        val live = options.liveEvents ?: return
        // Published again when the workflow is replayed: the callers' streams drop the repeats by key.
        val key = keys!!.keyOf(event)
        try {
            live.publish(LiveEvent(key, event))
        } catch (e: Exception) {
            // The side channel must not fail the run; a lost event is not published again unless replayed.
        }
    }

    override fun result(): String? = encoded

    override fun progress(): String = JsonObject(
        mapOf(
            "events" to JsonPrimitive(events),
            "nodes" to JsonObject(lastEvent.mapValues { JsonPrimitive(it.value) }),
            "interrupts" to JsonObject(asked().mapValues { JsonPrimitive(it.value) }),
        ),
    ).toString()

    private fun asked(): Map<String, String> = interrupts?.asked().orEmpty()

    override fun interrupts(): String = JsonObject(asked().mapValues { JsonPrimitive(it.value) }).toString()

    override fun answer(interruptId: String, answer: String) {
        // Validated already; two answers to one id validated in one workflow task fail the second Update only.
        try {
            validateAnswer(interruptId, answer)
            interrupts!!.answer(interruptId, answer)
        } catch (e: IllegalArgumentException) {
            throw ApplicationFailure.newFailure(e.message, IllegalArgumentException::class.java.name)
        }
    }

    override fun validateAnswer(interruptId: String, answer: String) {
        val pending = interrupts ?: throw IllegalArgumentException(
            "The run has not started yet: no interrupt '$interruptId' is pending.",
        )
        pending.validate(interruptId)
    }
}
