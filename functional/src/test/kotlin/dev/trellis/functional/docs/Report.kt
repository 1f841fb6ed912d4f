package dev.trellis.functional.docs

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.functional.task
import dev.trellis.functional.taskAsync
import dev.trellis.functional.workflow
import kotlinx.coroutines.awaitAll

fun search(section: String): String = "findings on $section"

val report = workflow<String, String>("report") { topic ->
    val sections = task("plan") { listOf("$topic: causes", "$topic: effects") } // runs once, even across a crash
    val parts = sections.map { section ->
        taskAsync("search") { search(section) } // in parallel; its identity is taken at the call
    }.awaitAll() // joined in call order
    task("write") { parts.joinToString("; ") }
}

suspend fun write(store: CheckpointStore): String =
    report.run("the sky", store, runId = "report-42") // the same call resumes run report-42
