package dev.trellis.javaapi.internal

import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import java.time.Duration
import java.util.concurrent.TimeoutException
import kotlin.coroutines.CoroutineContext
import kotlin.time.toKotlinDuration

/**
 * A blocking `invoke` of graph [graphId]: [run] in a `runBlocking` on the calling thread with [context], within
 * [timeout] if given. Interrupting the thread cancels the run; once it has ended this throws an
 * [InterruptedException] saying so, with the thread's interrupt flag set again. A thread interrupted before the call
 * starts no run.
 *
 * Inline, so that [run] is the code of runBlocking's block instead of a suspend lambda of its own that the block calls:
 * two objects fewer per run.
 */
@Throws(InterruptedException::class, TimeoutException::class)
internal inline fun <T> runHere(
    graphId: String,
    context: CoroutineContext,
    timeout: Duration?,
    crossinline run: suspend () -> T,
): T {
    if (Thread.interrupted()) throw interrupted(graphId, "no run was started")
    try {
        return runBlocking(context) {
            if (timeout == null) {
                run()
            } else {
                withTimeoutOrNull(timeout.toKotlinDuration()) { run() }
                    ?: throw TimeoutException(
                        "Run of graph '$graphId' did not finish within $timeout; it was cancelled.",
                    )
            }
        }
    } catch (_: InterruptedException) {
        // runBlocking cancelled the run when it saw the interrupt (clearing the flag) and waited for it to end.
        throw interrupted(graphId, "its run was cancelled and has ended")
    }
}

internal fun interrupted(graphId: String, outcome: String): InterruptedException {
    Thread.currentThread().interrupt()
    return InterruptedException("The thread calling invoke on graph '$graphId' was interrupted, so $outcome.")
}
