package dev.trellis.runtime.internal

import dev.trellis.runtime.JavaCaller
import dev.trellis.runtime.Status
import kotlinx.coroutines.currentCoroutineContext

/**
 * The calls that error messages suggest, in the caller's language: the Kotlin API's, or the Java facade's when the
 * call came through it (its coroutines carry [JavaCaller]).
 */
internal class CallNames private constructor(private val java: Boolean) {
    fun resume(
        runId: String,
    ): String = if (java) "runner.resumeAsync(\"$runId\")" else "graph.resume(\"$runId\", options)"

    fun resumeWithAnswers(runId: String): String =
        if (java) {
            "runner.resumeAsync(\"$runId\", Map.of(nodeId, answer, ...))"
        } else {
            "graph.resume(\"$runId\", options, mapOf(nodeId to answer, ...))"
        }

    fun fork(runId: String): String =
        if (java) "runner.forkAsync(\"$runId\", sequence)" else "graph.fork(\"$runId\", sequence, options)"

    fun retry(runId: String): String =
        if (java) "runner.retryAsync(\"$runId\")" else "graph.retry(\"$runId\", options)"

    fun delete(runId: String): String = if (java) "runner.deleteAsync(\"$runId\")" else "store.delete(\"$runId\")"

    /** Where a run id is set. */
    val runIdSetting: String get() = if (java) "JavaRunOptions.builder().runId(...)" else "RunOptions.runId"

    /** Why a new run cannot take [runId], whose latest checkpoint in the store has [status], and what to do. */
    fun runIdTaken(runId: String, status: String): String =
        if (status == Status.COMPLETED.name || status == Status.FAILED.name) {
            "Run '$runId' already ended $status and its checkpoints are in the store, so a new run cannot take " +
                "its id " +
                "(and an ended run cannot be resumed). Start the new run with another run id ($runIdSetting), " +
                "fork the " +
                "old run with ${fork(runId)} to run it again, or delete it first with ${delete(runId)}."
        } else {
            "Run '$runId' already has checkpoints in the store; resume it with ${resume(
                runId,
            )} (its latest checkpoint " +
                "is $status), or start a new run with another run id ($runIdSetting)."
        }

    companion object {
        private val KOTLIN = CallNames(false)
        private val JAVA = CallNames(true)

        /** The names for the calling coroutine. */
        suspend fun current(): CallNames = if (currentCoroutineContext()[JavaCaller] != null) JAVA else KOTLIN
    }
}
