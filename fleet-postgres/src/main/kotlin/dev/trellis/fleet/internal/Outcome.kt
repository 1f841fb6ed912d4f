package dev.trellis.fleet.internal

import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.fleet.FleetInterrupt
import dev.trellis.fleet.FleetStatus
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status

/** How a claim of a run ended, as the worker records it in the queue. */
internal class Outcome(
    val status: FleetStatus,
    val output: String? = null,
    val error: String? = null,
    val interrupts: List<FleetInterrupt> = emptyList(),
    val retryInMillis: Long = 0,
)

/**
 * The outcome of a run that returned [result]; null when nothing is to be recorded (the run was taken over). A
 * failure to write a checkpoint sends the run back to the queue, to be retried in [retryMillis].
 */
internal fun outcomeOf(retryMillis: Long, result: RunResult): Outcome? = when (result.status) {
    Status.COMPLETED -> Outcome(FleetStatus.COMPLETED, output = StateJson.encode(result.state))
    Status.INTERRUPTED -> if (result.interrupts.isEmpty()) {
        Outcome(FleetStatus.QUEUED) // drained: back to the queue for another worker
    } else {
        Outcome(FleetStatus.PAUSED, interrupts = result.interrupts.map { FleetInterrupt(it.nodeId, it.payload) })
    }
    Status.FAILED -> when {
        result.errors.any { it is FencedOutException } -> null // taken over: the new owner records the end
        result.errors.first() is CheckpointStoreException ->
            Outcome(
                FleetStatus.RUNNING,
                retryInMillis = retryMillis,
                error = result.error?.message,
            )
        else -> Outcome(FleetStatus.FAILED, error = result.error?.let { it.message ?: it.toString() })
    }
    else -> null
}
