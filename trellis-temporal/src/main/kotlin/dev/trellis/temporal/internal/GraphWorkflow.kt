package dev.trellis.temporal.internal

import dev.trellis.graph.Graph
import dev.trellis.graph.InternalTrellisApi
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RemoteEvents
import dev.trellis.runtime.RemoteRuns
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.start
import dev.trellis.temporal.LiveEvent
import dev.trellis.temporal.TemporalOptions
import dev.trellis.temporal.WorkflowTaskId
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
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
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

    /**
     * The workflow tasks of this execution that made events, from the one whose `WorkflowTaskStarted` is event
     * [since] on, and the started event id of the last task it ran, as JSON (`{"tasks":[5,11],"reached":17}`): the
     * caller's stream passes an event on only once its task is listed (`TaskCommits`).
     */
    @QueryMethod(name = "tasks")
    fun tasks(since: Long): String

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
 * unwinds as locally (status CANCELLED); the workflow then completes with that result. A run whose history grew
 * long continues as new (`Segments.kt`): this workflow execution is then one segment of it, and the next resumes it.
 */
internal class GraphWorkflowImpl(
    private val graphs: Map<String, TreeMap<Int, Graph>>,
    private val options: TemporalOptions,
) : GraphWorkflow {
    private val lastEvent = LinkedHashMap<String, String>()

    /** The sequence number of the run's next event, across segments: also the count of its events so far. */
    private var sequence = 0L

    /** Whether this segment resumes a run that continued as new (its `RunStarted` is a seam, not the run's start). */
    private var resumed = false
    private var draining = false
    private var encoded: String? = null

    /** The started event ids of this execution's workflow tasks that made events, ascending (the `tasks` query). */
    private val eventTasks = ArrayList<Long>()
    private var interrupts: PendingInterrupts? = null
    private var keys: LiveKeys? = null

    override fun run(request: String): String {
        val req = Payloads.json.parseToJsonElement(request).jsonObject
        val graphId = req.getValue("graph").jsonPrimitive.content
        val versions = graphs[graphId] ?: throw ApplicationFailure.newNonRetryableFailure(
            "This worker has no graph '$graphId'; register it with TemporalWorkers.register on every worker of the task queue.",
            "UnknownGraph",
        )
        val runId = Workflow.getInfo().workflowId
        val carried = req["continued"]?.let { Carried.decode(runId, it) }
        // The caller's budget, carried from segment to segment (its totals and time spent are in the checkpoint).
        val budget = req["budget"]
        val version = if (carried == null) {
            GraphVersioning.version(graphId, versions)
        } else {
            GraphVersioning.carried(graphId, versions, carried.version)
        }
        val graph = versions.getValue(version)
        if (carried != null) {
            resumed = true
            sequence = carried.sequence
            lastEvent.putAll(carried.lastEvent)
        }
        val pending = PendingInterrupts(runId).also { interrupts = it }
        val liveKeys = LiveKeys(runId).also { keys = it }
        val dispatcher = WorkflowDispatcher()
        val scope = CoroutineScope(dispatcher + Job())
        val store = SegmentStore(runId)
        carried?.let { store.seed(it.checkpoint) }
        val control = RunControl()
        val segmented = segmented()
        lateinit var nodes: ActivityNodes
        // Continue-as-new: a run drains when its history is full and no subgraph or map node runs (Segments.kt),
        // looked at before the workflow waits and when the last such node ends (before the engine starts the next).
        val drainIfFull = {
            if (segmented && !draining && nodes.compositesRunning == 0 && historyFull(options)) {
                draining = true
                control.drain()
            }
        }
        nodes = ActivityNodes(graphId, version, options, pending, liveKeys, drainIfFull)
        val runOptions = RunOptions(
            runId = runId,
            dispatcher = dispatcher,
            clock = WorkflowClock,
            timeSource = WorkflowTimeSource,
            random = Workflow.newRandom().asKotlinRandom(),
            // Runs begun before continue-as-new existed saved no checkpoints (their replay must issue the same
            // commands: a checkpointed run in workflow time also keeps its lease alive with a timer).
            checkpointing = if (segmented) segmentCheckpointing(store) else null,
            control = control,
            interceptors = listOf(nodes),
            budget = budget?.let { BudgetCodec.decode(it) },
        )
        val handle = if (carried == null) {
            val input = Payloads.decodeState(graph.schema, req.getValue("input").jsonObject)
            graph.start(scope, input, runOptions) { event -> record(event) }
        } else {
            @OptIn(InternalTrellisApi::class)
            RemoteRuns.startResumed(graph, scope, runId, runOptions) { event -> record(event) }
        }
        try {
            drive(dispatcher, { handle.isDone }, drainIfFull)
        } catch (e: CanceledFailure) {
            Workflow.newDetachedCancellationScope {
                handle.cancel()
                drive(dispatcher, { handle.isDone }) {}
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
        val attemptsBefore = carried?.attempts.orEmpty()
        if (draining && result.status == Status.INTERRUPTED) {
            // Drained: the run goes on in a new workflow execution, from the checkpoint it saved.
            val attempts = HashMap(attemptsBefore)
            for ((id, node) in result.nodes) attempts.merge(id, node.attempts, Int::plus)
            val next = Carried(version, store.last(), sequence, LinkedHashMap(lastEvent), attempts)
            val request = LinkedHashMap<String, JsonElement>()
            request["graph"] = JsonPrimitive(graphId)
            request["continued"] = next.encode()
            budget?.let { request["budget"] = it }
            Workflow.continueAsNew(JsonObject(request).toString())
        }
        // A cancelled workflow closes CANCELED whatever it returns: the result query still answers.
        return RunCodec.encodeResult(result, attemptsBefore).toString().also { encoded = it }
    }

    /**
     * Whether this run may continue as new (it checkpoints into its segment store): true for runs begun by a worker
     * that knows continue-as-new, false when replaying a history recorded before (Temporal's patching).
     */
    private fun segmented(): Boolean =
        Workflow.getVersion(SEGMENTS_CHANGE, Workflow.DEFAULT_VERSION, 1) == 1

    /** Runs the run's continuations until [done]; [beforeWait] looks at the run each time it is about to wait. */
    private inline fun drive(dispatcher: WorkflowDispatcher, done: () -> Boolean, beforeWait: () -> Unit) {
        while (true) {
            dispatcher.drain()
            if (done()) return
            beforeWait()
            Workflow.await { dispatcher.hasWork() }
        }
    }

    /**
     * Takes an event of the segment's run: the events of the run's segments are numbered as one run's, and the caller
     * sees none of the segments' seams — a resumed segment's `RunStarted`, a drained segment's `RunInterrupted`, and
     * the checkpoints segments save.
     */
    private fun record(event: RunEvent) {
        val seam = event is RunEvent.CheckpointSaved ||
            (event is RunEvent.RunStarted && resumed) ||
            (event is RunEvent.RunInterrupted && draining)
        if (seam) return
        @OptIn(InternalTrellisApi::class)
        val numbered = RemoteEvents.resequenced(event, sequence++)
        if (numbered is RunEvent.NodeEvent) lastEvent[numbered.path] = numbered.javaClass.simpleName
        val live = options.liveEvents ?: return
        // Published again when the workflow is replayed: the callers' streams drop the repeats by key.
        val key = keys!!.keyOf(numbered)
        val info = Workflow.getInfo()
        // The task that made it: the caller passes the event on once the `tasks` query lists that task.
        val task = WorkflowTaskId(info.runId, info.historyLength)
        if (eventTasks.lastOrNull() != task.startedEventId) eventTasks += task.startedEventId
        try {
            live.publish(LiveEvent(key, numbered, task))
        } catch (e: Exception) {
            // The side channel must not fail the run; a lost event is not published again unless replayed.
        }
    }

    override fun result(): String? = encoded

    override fun tasks(since: Long): String {
        val from = eventTasks.binarySearch(since).let { if (it < 0) -it - 1 else it }
        return JsonObject(
            mapOf(
                "tasks" to JsonArray(eventTasks.subList(from, eventTasks.size).map { JsonPrimitive(it) }),
                "reached" to JsonPrimitive(Workflow.getInfo().historyLength),
            ),
        ).toString()
    }

    override fun progress(): String = JsonObject(
        mapOf(
            "events" to JsonPrimitive(sequence),
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

/** The change id of continue-as-new for Temporal's patching: histories recorded before it replay without it. */
private const val SEGMENTS_CHANGE = "trellis-continue-as-new"
