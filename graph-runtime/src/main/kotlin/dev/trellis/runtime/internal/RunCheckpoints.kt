package dev.trellis.runtime.internal

import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.graph.State
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.writableState
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
        recorder.errors[0].addSuppressed(e)
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
    writer.checkpoint(status, full, state, position, recorder, saga)
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
        checkpoint("RUNNING")
    } catch (e: Throwable) {
        e.rethrowIfFatal(currentCoroutineContext())
        fail(e)
    }
}

/**
 * [checkpointStep] for the run's first checkpoint: not inline, so that a run without checkpoints keeps the smaller
 * suspend frame.
 */
internal suspend fun Engine.checkpointStart() {
    checkpointStep()
}
