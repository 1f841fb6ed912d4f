package dev.trellis.runtime.internal.policies

import dev.trellis.graph.SliceViolationException
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.events.emitRetrying
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.execution.InterruptSignal
import dev.trellis.runtime.internal.rethrowIfCancelled
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import kotlin.time.toJavaDuration

/*
 * Retry (`docs/semantics.md` §7): the attempts of an execution whose node has a retry policy or a timeout, until one
 * succeeds, the policy gives up, or the run is cancelled. Each attempt after a failure starts from the run's current
 * state with its writes cleared, after the policy's delay and a `NodeRetrying` event; an attempt under a timeout runs
 * as a [TimedAttempt]. The common case — one attempt, no timeout — never comes here ([Execution.runOnce]).
 */

/**
 * Runs this execution's attempts until one succeeds, its retry policy gives up, or the coroutine is cancelled (then
 * its status is CANCELLED and the cancellation is rethrown); its duration counts from the reading in [durationNanos]
 * ([Execution.run]).
 */
internal suspend fun Execution.runAttempts() {
    val retry = retry
    val timeout = timeout
    try {
        while (true) {
            val failure = attemptOnce(timeout) ?: break
            if (failure is InterruptSignal) {
                status = Status.INTERRUPTED
                interruptPayload = failure.payload
                break
            }
            if (failure is SliceViolationException || !retry.shouldRetry(failure, attempt)) {
                status = Status.FAILED
                error = failure
                break
            }
            val wait = retry.delayBefore(attempt + 1, engine.options.random)
            engine.emitRetrying(this, failure, wait.toJavaDuration())
            delay(wait)
            attempt++
            snapshot = engine.currentState
            clearWrites()
        }
        // A body that swallowed the cancellation of its run still ends cancelled, its writes unapplied.
        currentCoroutineContext().ensureActive()
        if (status == Status.EXECUTING) status = Status.COMPLETED
    } catch (e: CancellationException) {
        status = Status.CANCELLED
        throw e
    } finally {
        durationNanos = engine.nanoTime() - durationNanos
    }
}

/** Runs one attempt; returns its failure, or null on success. Rethrows real cancellation. */
private suspend fun Execution.attemptOnce(timeout: kotlin.time.Duration?): Throwable? {
    val failure = try {
        if (timeout == null) {
            invokeBody(this)
            error // a slice violation the body caught, else null
        } else {
            TimedAttempt(this).run(timeout, engine.childContext)
        }
    } catch (e: Throwable) {
        e
    } ?: return null
    failure.rethrowIfCancelled(currentCoroutineContext())
    clearWrites()
    return error ?: failure // a slice violation, even one the body caught, is the attempt's failure
}
