package dev.trellis.a2a

import dev.trellis.graph.Graph
import dev.trellis.graph.StateKey
import dev.trellis.graph.stateOf
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.agent.AgentEvent
import dev.trellis.runtime.events
import dev.trellis.runtime.resumeEvents
import io.a2a.server.agentexecution.AgentExecutor
import io.a2a.server.agentexecution.RequestContext
import io.a2a.server.events.EventQueue
import io.a2a.server.tasks.TaskUpdater
import io.a2a.spec.InvalidRequestError
import io.a2a.spec.Part
import io.a2a.spec.TaskState
import io.a2a.spec.TextPart
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Job
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.runBlocking

/**
 * Runs [graph] for A2A tasks: a task is a run with the task's id as run id, checkpointed by [checkpointing]. A new
 * task's message text is written to [input] and the run starts; the run's node completions and custom events become
 * `working` status updates; a completed run gives one artifact per key of [outputs] (named after the key) and
 * completes the task; an interrupted run asks for input (`input-required`, the interrupt's question as message), and
 * the next message to the task is the answer the run resumes with; a failed run fails the task; cancelling the task
 * cancels the run (see [cancel]).
 */
internal class GraphAgentExecutor(
    private val graph: Graph,
    private val input: StateKey<String>,
    private val outputs: List<StateKey<String>>,
    private val checkpointing: Checkpointing,
) : AgentExecutor {
    /** Guards [executing] and [cancelled] together, so that an execution and a cancel of one task always meet. */
    private val lock = Any()

    /** The executions in progress, by task id. */
    private val executing = HashMap<String, Execution>()

    /**
     * The tasks cancelled, so that an execution that begins after its task was cancelled (a message to a task asking
     * for input, raced by a cancel) runs nothing. An id per cancelled task, as the SDK's in-memory task store keeps
     * each task.
     */
    private val cancelled = HashSet<String>()

    override fun execute(context: RequestContext, eventQueue: EventQueue) {
        val taskId = context.taskId
        val task = context.task
        if (task != null && task.status.state() != TaskState.INPUT_REQUIRED) {
            throw InvalidRequestError(
                "Task $taskId is ${task.status.state().asString()}; only a task that asks for input takes a " +
                    "message. Send a new message without a task id to start another task.",
            )
        }
        val execution = Execution(TaskUpdater(context, eventQueue))
        synchronized(lock) {
            if (taskId in cancelled) return // cancelled before it began: the task is canceled, no run
            executing[taskId] = execution
        }
        try {
            val text = context.getUserInput("\n")
            val events: Flow<RunEvent> =
                if (task == null) {
                    execution.update { it.submit() }
                    graph.events(stateOf(input to text), RunOptions(runId = taskId, checkpointing = checkpointing))
                } else {
                    graph.resumeEvents(taskId, RunOptions(checkpointing = checkpointing), text)
                }
            execution.update { it.startWork() }
            runBlocking(execution.job) { events.collect { relay(it, execution) } }
        } catch (_: CancellationException) {
            // cancelled through cancel(), which reported it
        } finally {
            synchronized(lock) { executing.remove(taskId, execution) }
        }
    }

    private fun relay(event: RunEvent, execution: Execution) {
        when (event) {
            is RunEvent.NodeCompleted ->
                execution.update { it.updateStatus(TaskState.WORKING, message(it, "${event.path} completed")) }
            is RunEvent.Custom ->
                execution.update { it.updateStatus(TaskState.WORKING, message(it, describe(event.payload))) }
            is RunEvent.RunCompleted -> execution.finish { updater ->
                for (key in outputs) {
                    val value = event.result.state[key]
                    updater.addArtifact(listOf<Part<*>>(TextPart(value)), key.name, key.name, null)
                }
                updater.complete()
            }
            is RunEvent.RunInterrupted -> execution.finish {
                val question = event.result.interrupts.joinToString("\n") { interrupt -> interrupt.payload }
                it.requiresInput(message(it, question), true)
            }
            is RunEvent.RunFailed -> execution.finish { it.fail(message(it, describe(event.result.error))) }
            is RunEvent.RunCancelled -> execution.finish { it.cancel() }
            else -> Unit
        }
    }

    /** The messages of [error] and its causes, each once. */
    private fun describe(error: Throwable?): String =
        generateSequence(error) { it.cause }.mapNotNull { it.message }.distinct().joinToString(": ")
            .ifEmpty { "the run failed" }

    private fun describe(payload: Any): String = when (payload) {
        is AgentEvent.Token -> payload.text
        is AgentEvent.Step -> "[${payload.agent}] ${payload.description}"
        else -> payload.toString()
    }

    private fun message(updater: TaskUpdater, text: String) =
        updater.newAgentMessage(listOf<Part<*>>(TextPart(text)), null)

    /**
     * Cancels task [RequestContext.getTaskId]: its run, if one is executing, is cancelled (its nodes are cancelled as
     * in any cancelled run), and the task is reported `canceled` — unless the run reported its end first (then the
     * SDK answers that the task cannot be cancelled). A task cancelled before its execution began never runs.
     */
    override fun cancel(context: RequestContext, eventQueue: EventQueue) {
        val taskId = context.taskId
        val execution = synchronized(lock) {
            cancelled += taskId
            executing[taskId]
        }
        if (execution == null) {
            TaskUpdater(context, eventQueue).cancel() // no run executing: one waiting for input, or none yet
            return
        }
        execution.job.cancel() // first: the run stops even if reporting the cancellation fails
        execution.finish { TaskUpdater(context, eventQueue).cancel() }
    }

    /**
     * One execution of a task (a new run, or a run resumed with an answer): the job its run is collected in, and its
     * status updates, which end at the first final one — the run's end, or a cancel, whichever comes first; updates
     * after it are dropped (the SDK refuses them).
     */
    private class Execution(private val updater: TaskUpdater) {
        val job: Job = Job()
        private var finished = false

        /** Reports a non-final update, unless the task already ended. */
        @Synchronized
        fun update(report: (TaskUpdater) -> Unit) {
            if (!finished) report(updater)
        }

        /** Reports the task's end with [report], unless it already ended. */
        @Synchronized
        fun finish(report: (TaskUpdater) -> Unit) {
            if (finished) return
            finished = true
            report(updater)
        }
    }
}
