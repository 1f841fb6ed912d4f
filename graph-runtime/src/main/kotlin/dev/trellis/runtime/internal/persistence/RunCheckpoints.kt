package dev.trellis.runtime.internal.persistence

import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.graph.State
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.checkpoint.writableState
import dev.trellis.runtime.internal.policies.meters
import dev.trellis.runtime.internal.policies.spentNanos
import dev.trellis.runtime.internal.rethrowIfFatal
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.fail
import kotlinx.coroutines.currentCoroutineContext

/*
 * The checkpoints an [Engine] saves through its [Checkpointer] (`docs/persistence.md`): one per step when every step
 * is saved ([checkpointStep]), the full one of the run's end ([checkpointFinal]); a failure to save fails the run.
 */

/** Saves the full checkpoint of the run's end; a failure to save fails the run, a cancellation is rethrown. */
internal suspend fun Engine.checkpointFinal(status: Status) {
    val asked = recorder.interrupts.any { it.nestedInterrupts?.isEmpty() != true }
    val label = if (status == Status.INTERRUPTED && !asked) "DRAINED" else status.name
    try {
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
