package dev.trellis.functional.docs

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.functional.TaskPolicy
import dev.trellis.functional.WorkflowInterruptedException
import dev.trellis.functional.WorkflowSettings
import dev.trellis.functional.task
import dev.trellis.functional.workflow
import dev.trellis.graph.Retry
import dev.trellis.runtime.Budget
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunInstrumentation
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

val approval = workflow<String, String>("approval") { draft ->
    val policy = TaskPolicy.DEFAULT.withRetry(Retry.fixed(3, 100.milliseconds)).withTimeout(10.seconds)
    val checked = task("check", policy) {
        charge("tokens", 1200.0) // recorded with the task's result: counted once
        draft.trim()
    }
    emit("checked $checked") // a RunEvent.Custom of the workflow's node
    val answer = interrupt("Publish '$checked'? (yes/no)") // the run pauses here
    task("publish") { if (answer == "yes") "published $checked" else "kept $checked" }
}

suspend fun approve(store: CheckpointStore): String = try {
    approval.run(" draft 7 ", store, runId = "approval-1")
} catch (paused: WorkflowInterruptedException) {
    println(paused.payload) // Publish 'draft 7'? (yes/no)
    approval.resume("approval-1", store, answer = "yes") // "check" does not run again
}

suspend fun watch(store: CheckpointStore, tracing: RunInstrumentation): List<Any> {
    val settings = WorkflowSettings.DEFAULT
        .withBudget(Budget().withMeter("tokens", 50_000.0)) // checked when each task ends
        .withInstrumentation(tracing) // e.g. trellis-opentelemetry's TrellisTelemetry
    val payloads = mutableListOf<Any>()
    approval.events(" draft 8 ", store, "approval-2", settings).collect { event ->
        if (event is RunEvent.Custom) payloads += event.payload // TaskEvent.Started(check@0), …
    }
    return payloads
}
