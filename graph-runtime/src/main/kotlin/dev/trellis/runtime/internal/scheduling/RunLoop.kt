package dev.trellis.runtime.internal.scheduling

import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.RunTimeoutException
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.persistence.checkpointFinal
import dev.trellis.runtime.internal.persistence.checkpointResumed
import dev.trellis.runtime.internal.persistence.checkpointStart
import dev.trellis.runtime.internal.policies.Meters
import dev.trellis.runtime.internal.policies.checkBudgetAtStart
import dev.trellis.runtime.internal.policies.compensate
import dev.trellis.runtime.internal.policies.compensating
import dev.trellis.runtime.internal.policies.meters
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import kotlin.time.toJavaDuration

/**
 * Runs the run from its start to its end, and returns its result: the body of [Engine.execute]. Inline: its frame
 * is [Engine.execute]'s, one suspend frame per run less.
 */
internal suspend inline fun Engine.runToEnd(noinline onCancelled: (RunResult) -> Unit): RunResult {
    val errors = recorder.errors
    if (nesting == null) outbox.send { seq -> RunEvent.RunStarted(runId, seq, now(), graph.id, currentState) }
    val compensating = compensating
    if (restored == null) for (entry in topology.entries) position.markReady(entry)
    if (wallLimitNanos >= 0 && position.meters == null) position.meters = Meters() // time spent is checkpointed
    checkBudgetAtStart()
    // A resumed run with composite nodes starts a new delta chain here, so that a child's checkpoint never
    // extends the chain another process wrote (docs/persistence.md, nested checkpoints).
    if (checkpointer != null && !compensating && nesting == null && !fresh && (retrying || checkpointer.everyStep)) {
        // Before any node runs: checks that the store takes the run's next checkpoint (`RunCheckpoints.kt`).
        checkpointResumed()
    } else if (checkpointer?.everyStep == true && !compensating &&
        (fresh || (graph.hasComposites && nesting == null))
    ) {
        checkpointStart()
    }
    val timeout = config.executionTimeout
    val status: Status
    try {
        if (compensating) {
            // Restored while compensating (`docs/semantics.md` §13.6): no node runs, the compensations finish.
        } else if (timeout == null) {
            loop()
        } else if (withTimeoutOrNull(timeout) {
                loop()
                true
            } == null
        ) {
            fail(RunTimeoutException(timeout.toJavaDuration()))
            drainCancelled()
        }
        status = when {
            position.storeFault != null -> Status.INTERRUPTED
            errors.isNotEmpty() -> Status.FAILED
            recorder.interrupts.isNotEmpty() -> Status.INTERRUPTED
            drained && position.readyCount + position.pendingTriggers > 0 -> Status.INTERRUPTED
            else -> Status.COMPLETED
        }
        if (status == Status.FAILED && nesting == null && compensationLog != null) compensate()
        // Inside the try: a run cancelled while its last checkpoint is saved ends CANCELLED like any other.
        if (checkpointer != null && !checkpointer.fencedOut && position.storeFault == null) checkpointFinal(status)
    } catch (e: CancellationException) {
        withContext(NonCancellable) {
            outbox.draining = true
            drainCancelled()
            if (options.compensateOnCancel && nesting == null && compensationLog != null) compensate()
            releaseLease()
            val result = result(Status.CANCELLED)
            onCancelled(result)
            if (nesting == null) {
                outbox.send { seq -> RunEvent.RunCancelled(runId, seq, now(), result) }
            } else {
                outbox.flush()
            }
        }
        throw e
    }
    releaseLease()
    val result = result(
        when {
            position.storeFault != null -> Status.INTERRUPTED
            errors.isEmpty() -> status
            else -> Status.FAILED
        },
    )
    if (nesting != null) {
        outbox.flush()
        return result
    }
    outbox.send { seq ->
        when (result.status) {
            Status.COMPLETED -> RunEvent.RunCompleted(runId, seq, now(), result)
            Status.INTERRUPTED -> RunEvent.RunInterrupted(runId, seq, now(), result)
            else -> RunEvent.RunFailed(runId, seq, now(), result.errors.first(), result)
        }
    }
    return result
}

/** The run's result, ended with [status]. */
internal fun Engine.result(status: Status): RunResult = recorder.result(
    runId,
    graph.id,
    status,
    currentState,
    position.counts,
    segmentStart,
    nanoTime(),
    childResults ?: emptyMap(),
    position.meters?.asDoubles() ?: emptyMap(),
    compensationLog?.results?.toList() ?: emptyList(),
    position.storeFault,
)
