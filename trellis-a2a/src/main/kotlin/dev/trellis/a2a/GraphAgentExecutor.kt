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
import kotlinx.coroutines.job
import kotlinx.coroutines.runBlocking
import java.util.concurrent.ConcurrentHashMap

/**
 * Runs [graph] for A2A tasks: a task is a run with the task's id as run id, checkpointed by [checkpointing]. A new
 * task's message text is written to [input] and the run starts; the run's node completions and custom events become
 * `working` status updates; a completed run gives one artifact per key of [outputs] (named after the key) and
 * completes the task; an interrupted run asks for input (`input-required`, the interrupt's question as message), and
 * the next message to the task is the answer the run resumes with; a failed run fails the task; cancelling the task
 * cancels the run.
 */
internal class GraphAgentExecutor(
    private val graph: Graph,
    private val input: StateKey<String>,
    private val outputs: List<StateKey<String>>,
    private val checkpointing: Checkpointing,
) : AgentExecutor {
    private val running = ConcurrentHashMap<String, Job>()
    private val cancelled = ConcurrentHashMap.newKeySet<String>()

    override fun execute(context: RequestContext, eventQueue: EventQueue) {
        val updater = TaskUpdater(context, eventQueue)
        val taskId = context.taskId
        val text = context.getUserInput("\n")
        val task = context.task
        val events: Flow<RunEvent> =
            when {
                task == null -> {
                    updater.submit()
                    graph.events(stateOf(input to text), RunOptions(runId = taskId, checkpointing = checkpointing))
                }
                task.status.state() == TaskState.INPUT_REQUIRED ->
                    graph.resumeEvents(taskId, RunOptions(checkpointing = checkpointing), text)
                else -> throw InvalidRequestError(
                    "Task $taskId is ${task.status.state().asString()}; only a task that asks for input takes a " +
                        "message. Send a new message without a task id to start another task.",
                )
            }
        updater.startWork()
        try {
            runBlocking {
                running[taskId] = coroutineContext.job
                if (taskId in cancelled) return@runBlocking
                events.collect { relay(it, updater) }
            }
        } catch (_: CancellationException) {
            // cancelled through cancel(), which reported it
        } finally {
            running.remove(taskId)
        }
    }

    private fun relay(event: RunEvent, updater: TaskUpdater) {
        when (event) {
            is RunEvent.NodeCompleted ->
                updater.updateStatus(TaskState.WORKING, message(updater, "${event.path} completed"))
            is RunEvent.Custom -> updater.updateStatus(TaskState.WORKING, message(updater, describe(event.payload)))
            is RunEvent.RunCompleted -> {
                for (key in outputs) {
                    val value = event.result.state[key]
                    updater.addArtifact(listOf<Part<*>>(TextPart(value)), key.name, key.name, null)
                }
                updater.complete()
            }
            is RunEvent.RunInterrupted -> {
                val question = event.result.interrupts.joinToString("\n") { it.payload }
                updater.requiresInput(message(updater, question), true)
            }
            is RunEvent.RunFailed -> updater.fail(message(updater, describe(event.result.error)))
            is RunEvent.RunCancelled -> if (cancelled.add(event.runId)) updater.cancel()
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

    override fun cancel(context: RequestContext, eventQueue: EventQueue) {
        val taskId = context.taskId
        val first = cancelled.add(taskId)
        running.remove(taskId)?.cancel() // first: the run stops even if reporting the cancellation fails
        if (first) TaskUpdater(context, eventQueue).cancel()
    }
}
