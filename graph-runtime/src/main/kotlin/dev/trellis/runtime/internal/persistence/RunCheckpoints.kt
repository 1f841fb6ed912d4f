package dev.trellis.runtime.internal.persistence

import dev.trellis.checkpoint.CheckpointConflictException
import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.graph.State
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.writableState
import dev.trellis.runtime.internal.policies.meters
import dev.trellis.runtime.internal.policies.spentNanos
import dev.trellis.runtime.internal.rethrowIfFatal
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.cancelRunning
import dev.trellis.runtime.internal.scheduling.fail
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive

/*
 * The checkpoints an [Engine] saves through its [Checkpointer] (`docs/persistence.md`): one per step when every step
 * is saved ([checkpointStep]), the full one of the run's end ([checkpointFinal]); a failure to save fails the run.
 */

/** Saves the full checkpoint of the run's end; a failure to save fails the run, a cancellation is rethrown. */
internal suspend fun Engine.checkpointFinal(status: Status) {
    val asked = recorder.interrupts.any { it.nestedInterrupts?.isEmpty() != true }
    val label = if (status == Status.INTERRUPTED && !asked) "DRAINED" else status.name
    try {
        // A run cancelled meanwhile saves nothing more (`docs/semantics.md` §6).
        currentCoroutineContext().ensureActive()
        checkpoint(label, full = true)
    } catch (e: Throwable) {
        e.rethrowIfFatal(currentCoroutineContext())
        if (e is CheckpointStoreUnavailableException) {
            stopResumable(e)
            return
        }
        recorder.errors += e
        if (e !is CheckpointStoreException) saveFailure()
    }
}

/**
 * The run's end could not be checkpointed because the checkpoint could not be written (a value its serializer
 * cannot write): saves a FAILED checkpoint without the values that cannot be written, holding the errors, so
 * that the store tells the truth instead of showing the run RUNNING at an earlier checkpoint.
 */
private suspend fun Engine.saveFailure() {
    try {
        checkpoint(Status.FAILED.name, full = true, state = writableState(topology.keys, currentState))
    } catch (e: Throwable) {
        e.rethrowIfFatal(currentCoroutineContext())
        // A step checkpoint written behind the run that failed fails every later one with the same error.
        val first = recorder.errors[0]
        if (e !== first) first.addSuppressed(e)
    }
}

/**
 * Saves a checkpoint of the current position; a failure to save fails the run. Inline, as [checkpointStep]: a step's
 * save then takes the suspend frames of [Checkpointer.checkpoint] and the store's append only.
 */
@Suppress("NOTHING_TO_INLINE")
internal suspend inline fun Engine.checkpoint(status: String, full: Boolean = false, state: State = currentState) {
    val writer = checkpointer ?: return
    position.meters?.spentNanos = spentNanos()
    writer.checkpoint(status, full, state, position, recorder, compensationLog)
    checkpointSaved(writer)
}

/** Posts the event of [writer]'s last checkpoint. Not a suspend function: no boxed sequence. */
internal fun Engine.checkpointSaved(writer: Checkpointer) {
    val sequence = writer.lastSequence
    val wasFull = writer.lastWasFull
    outbox.post { seq -> RunEvent.CheckpointSaved(runId, seq, now(), sequence, wasFull) }
}

/** Saves the checkpoint of a step (status RUNNING); a failure to save fails the run. */
@Suppress("NOTHING_TO_INLINE")
internal suspend inline fun Engine.checkpointStep() {
    try {
        // A run cancelled meanwhile saves nothing more (`docs/semantics.md` §6), even when a store writes without
        // suspending (then no suspension would notice the cancellation).
        currentCoroutineContext().ensureActive()
        // [checkpoint]'s lines with its arguments written in: the parameters of an inline function are locals of the
        // suspend function it is inlined into, kept in its frame object across the save (one object per step).
        val writer = checkpointer!!
        position.meters?.spentNanos = spentNanos()
        writer.checkpoint("RUNNING", false, currentState, position, recorder, compensationLog, step = true)
        checkpointSaved(writer)
    } catch (e: Throwable) {
        e.rethrowIfFatal(currentCoroutineContext())
        if (e is CheckpointStoreUnavailableException) stopResumable(e) else fail(e)
    }
}

/**
 * The store stayed unreachable past its own bound ([CheckpointStoreUnavailableException]): an infrastructure fault,
 * not the graph's. The run stops **resumable** — it starts nothing more, cancels what runs (it would run again on
 * resume anyway), saves nothing more (no `FAILED` checkpoint), compensates nothing, and ends `INTERRUPTED` with
 * [dev.trellis.runtime.RunResult.stoppedBy] set (`docs/persistence.md`, "Faults").
 */
internal fun Engine.stopResumable(e: CheckpointStoreUnavailableException) {
    if (position.storeFault == null) position.storeFault = e
    position.cancelSeen = true
    position.halted = true
    cancelRunning()
}

/**
 * [checkpointStep] for the run's first checkpoint: not inline, so that a run without checkpoints keeps the smaller
 * suspend frame.
 */
internal suspend fun Engine.checkpointStart() {
    checkpointStep()
}

/** The label of the first checkpoint of a retried run (`retry`), which records the retry in the run's history. */
internal const val RETRY = "RETRY"

/**
 * The first checkpoint of a resumed or retried run, full, saved before any node runs — so that a run whose rows in the
 * store disagree with its checkpoints (a corrupted latest sequence, a gap) fails before any node body runs, with a
 * message naming the run, the store and the fix, instead of at the first completion. A retried run's is labelled
 * [RETRY].
 */
internal suspend fun Engine.checkpointResumed() {
    try {
        currentCoroutineContext().ensureActive()
        checkpoint(if (retrying) RETRY else "RUNNING", full = true)
    } catch (e: Throwable) {
        e.rethrowIfFatal(currentCoroutineContext())
        when (e) {
            is CheckpointStoreUnavailableException -> stopResumable(e)
            is CheckpointConflictException -> fail(
                IllegalStateException(
                    "Run '$runId' cannot be continued: its rows in ${checkpointer!!.config.store} disagree with its " +
                        "checkpoints (${e.message}). Nothing was run. Repair the run's row in the store (its latest " +
                        "sequence must be ${checkpointer.lastSequence}, the sequence of its latest checkpoint), or " +
                        "fork the run from one of its checkpoints to run it again under a new id.",
                    e,
                ),
            )
            else -> fail(e)
        }
    }
}
