package dev.trellis.temporal.internal

import dev.trellis.temporal.WorkflowTaskId
import io.temporal.client.WorkflowClient
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.runInterruptible
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import java.util.Optional

/**
 * Whether the workflow tasks of run [workflowId] that made events completed (`docs/temporal.md`, "Events"): the
 * caller's stream passes an event of the workflow on only when the task that made it completed, and drops it when
 * the task failed (Temporal then discarded what the task did, and a replay makes the run's true events again).
 *
 * It asks each workflow execution of the run with the Query `tasks` ([GraphWorkflow.tasks]): Temporal answers a
 * query between workflow tasks, from the workflow's committed history, so a task the answer lists completed, and a
 * task the answer has passed without listing it did not. One per stream.
 */
internal class TaskCommits(private val client: WorkflowClient, private val workflowId: String) {
    private class Execution {
        /** The started event ids of the tasks that made events, as far as the execution's answers went. */
        val tasks = HashSet<Long>()

        /** The started event id of the last task the answers had seen. */
        var reached = 0L
    }

    private val executions = HashMap<String, Execution>()

    /** Suspends until the run's workflow execution says whether [task] completed. */
    suspend fun completed(task: WorkflowTaskId): Boolean {
        val execution = executions.getOrPut(task.executionRunId) { Execution() }
        var pause = FIRST_PAUSE_MILLIS
        while (true) {
            if (task.startedEventId in execution.tasks) return true
            if (execution.reached >= task.startedEventId) return false
            ask(task, execution)
            if (task.startedEventId in execution.tasks || execution.reached >= task.startedEventId) continue
            // The task has not completed yet (it may still run): ask again shortly.
            delay(pause)
            pause = (pause * 2).coerceAtMost(LAST_PAUSE_MILLIS)
        }
    }

    private suspend fun ask(task: WorkflowTaskId, execution: Execution) {
        val stub = client.newUntypedWorkflowStub(workflowId, Optional.of(task.executionRunId), Optional.empty())
        val answer = runInterruptible(Dispatchers.IO) {
            stub.query("tasks", String::class.java, task.startedEventId)
        }
        val json = Payloads.json.parseToJsonElement(answer).jsonObject
        for (id in json.getValue("tasks").jsonArray) execution.tasks += id.jsonPrimitive.long
        execution.reached = maxOf(execution.reached, json.getValue("reached").jsonPrimitive.long)
    }

    private companion object {
        const val FIRST_PAUSE_MILLIS = 5L
        const val LAST_PAUSE_MILLIS = 200L
    }
}
