package dev.trellis.functional

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.graph
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.events
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.Json
import java.util.UUID
import kotlin.coroutines.CoroutineContext

/**
 * One call of a workflow run (`docs/functional.md`): opens the run's journal (its lease), records an answer or the
 * input, and runs the body as the one node of a graph run — so that the run has the runtime's events, interceptors,
 * instrumentation and meters like any graph run — then gives up the lease.
 */
internal class WorkflowLaunch<I, O>(
    private val workflow: Workflow<I, O>,
    private val store: CheckpointStore,
    private val runId: String,
    private val settings: WorkflowSettings,
) {
    @Volatile private var output: Result<O>? = null

    @Volatile private var pending: Pair<Int, String>? = null

    /** The events of the run: [input] for a new run (ignored when the run has a record), [answer] for its interrupt. */
    fun events(input: Result<I>?, answer: String?): Flow<RunEvent> = flow {
        check(input != null || store.latest(runId) != null) {
            "Run '$runId' of workflow '${workflow.id}' has no record in this store, so there is nothing to resume; " +
                "start it with run(input, store, \"$runId\")."
        }
        val journal = Journal.open(store, runId, settings.owner ?: "workflow/${UUID.randomUUID()}", workflow.id)
        try {
            if (answer != null) {
                val waiting = checkNotNull(journal.pendingInterrupt) {
                    "Run '$runId' of workflow '${workflow.id}' waits for no answer; resume it without one."
                }
                journal.recordAnswer(waiting, answer)
            }
            if (journal.input == null) {
                checkNotNull(input) {
                    "Run '$runId' of workflow '${workflow.id}' has no record in this store, so there is nothing to " +
                        "resume; start it with run(input, store, \"$runId\")."
                }
                journal.recordInput(Json.encodeToJsonElement(workflow.input, input.getOrThrow()))
            }
            val actual = Json.decodeFromJsonElement(workflow.input, journal.input!!)
            val graph = vehicle(journal, actual)
            val options = settings.options.withRunId(runId, null, settings.budget ?: settings.options.budget)
            val state = graph.schema.initialState()
            val events = settings.instrumentation?.instrument(graph, options, null) { graph.events(state, it) }
                ?: graph.events(state, options)
            journal.alive {
                events.collect { event ->
                    if (event is RunEvent.RunInterrupted) {
                        pending = journal.pendingInterrupt?.let { it to journal.questionAt(it).orEmpty() }
                    }
                    settings.eventListener?.accept(event)
                    emit(event)
                }
            }
        } finally {
            withContext(NonCancellable) { journal.close() }
        }
    }

    private fun vehicle(journal: Journal, input: I): Graph = graph(workflow.id, workflow.schema) {
        val body = node(NODE) {
            val budget = settings.budget ?: settings.options.budget
            val run = WorkflowRun(workflow, journal, this, budget, settings.options.random)
            output = Result.success(run.execute(input))
        }
        start(body)
        body then END
    }

    /** Runs [events] in [callerContext] to the end and returns the output, or throws how the run ended. */
    suspend fun outcome(events: Flow<RunEvent>, callerContext: CoroutineContext): O {
        var terminal: RunEvent.Terminal? = null
        withContext(callerContext) { events.collect { if (it is RunEvent.Terminal) terminal = it } }
        return when (val end = checkNotNull(terminal) { "Run '$runId' ended without a terminal event." }) {
            is RunEvent.RunCompleted -> checkNotNull(output) { "Run '$runId' completed without output." }.getOrThrow()
            is RunEvent.RunInterrupted -> {
                val (position, payload) = pending ?: (-1 to end.result.interrupts.firstOrNull()?.payload.orEmpty())
                throw WorkflowInterruptedException(runId, position, payload)
            }
            is RunEvent.RunFailed -> throw end.error
            is RunEvent.RunCancelled ->
                throw CancellationException("Run '$runId' of workflow '${workflow.id}' was cancelled.")
        }
    }

    companion object {
        /** The id of the node that runs a workflow's body. */
        const val NODE: String = "workflow"
    }
}
