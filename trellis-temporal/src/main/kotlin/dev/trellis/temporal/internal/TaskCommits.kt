package dev.trellis.temporal.internal

import dev.trellis.temporal.WorkflowTaskId
import io.grpc.Status
import io.grpc.StatusRuntimeException
import io.temporal.api.common.v1.WorkflowExecution
import io.temporal.api.enums.v1.EventType
import io.temporal.api.history.v1.HistoryEvent
import io.temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryRequest
import io.temporal.client.WorkflowClient
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runInterruptible
import java.util.concurrent.TimeUnit

/**
 * Whether the workflow tasks of run [workflowId] completed, read from the history of each of its workflow executions
 * (`docs/temporal.md`, "Events"): the caller's stream passes an event of the workflow on only when the task that made
 * it completed, and drops it when the task failed or timed out (Temporal then discarded what the task did, and a
 * replay makes the run's true events again). One per stream; its histories are read as far as the stream needs,
 * long-polling for the events to come.
 */
internal class TaskCommits(private val client: WorkflowClient, private val workflowId: String) {
    private class Execution(val runId: String) {
        /** Started event id of each task whose end the history showed: true when it completed. */
        val ends = HashMap<Long, Boolean>()
        var token: com.google.protobuf.ByteString = com.google.protobuf.ByteString.EMPTY
        var closed = false
    }

    private val executions = HashMap<String, Execution>()

    /** Suspends until the history says whether [task] completed. */
    suspend fun completed(task: WorkflowTaskId): Boolean {
        val execution = executions.getOrPut(task.executionRunId) { Execution(task.executionRunId) }
        while (true) {
            execution.ends[task.startedEventId]?.let { return it }
            // A closed history names every task's end; a task it does not name was never recorded (not committed).
            if (execution.closed) return false
            readPage(execution)
        }
    }

    private suspend fun readPage(execution: Execution) {
        val request = GetWorkflowExecutionHistoryRequest.newBuilder()
            .setNamespace(client.options.namespace)
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId).setRunId(execution.runId))
            .setWaitNewEvent(true)
            .setNextPageToken(execution.token)
            .build()
        val response = try {
            runInterruptible(Dispatchers.IO) {
                client.workflowServiceStubs.blockingStub()
                    .withDeadlineAfter(POLL_SECONDS, TimeUnit.SECONDS)
                    .getWorkflowExecutionHistory(request)
            }
        } catch (e: StatusRuntimeException) {
            if (e.status.code == Status.Code.DEADLINE_EXCEEDED) return // nothing new for a while: ask again
            throw e
        }
        for (event in response.history.eventsList) note(execution, event)
        execution.token = response.nextPageToken
        if (response.nextPageToken.isEmpty) execution.closed = true
    }

    private fun note(execution: Execution, event: HistoryEvent) {
        when (event.eventType) {
            EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED ->
                execution.ends[event.workflowTaskCompletedEventAttributes.startedEventId] = true
            EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED ->
                execution.ends[event.workflowTaskFailedEventAttributes.startedEventId] = false
            EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT ->
                execution.ends[event.workflowTaskTimedOutEventAttributes.startedEventId] = false
            else -> {}
        }
    }

    private companion object {
        /** The longest one history request waits for new events; the stream then asks again. */
        const val POLL_SECONDS = 30L
    }
}
