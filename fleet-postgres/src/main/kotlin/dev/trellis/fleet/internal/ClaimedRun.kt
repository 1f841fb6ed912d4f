package dev.trellis.fleet.internal

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.fleet.FleetStatus
import dev.trellis.graph.Graph
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.ResumableRunException
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.StateMigration
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.stateAt
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.withContext
import kotlin.coroutines.CoroutineContext

/** Claims of a run after which a run that cannot be taken up (an [IllegalStateException]) is recorded FAILED. */
private const val MAX_SETUP_ATTEMPTS = 20

/**
 * Runs or resumes [claim]'s run of [graph] with [runOptions] in [context], by what its latest checkpoint in [store]
 * says, and returns how the claim ended; null when the claim was lost (nothing to record). A store that could not be
 * reached ([CheckpointStoreException], `CheckpointStoreUnavailableException` included), or a previous owner's lease
 * not yet expired, sends the run back to the queue to be claimed again in [retryMillis]: an infrastructure fault is
 * not the run's failure.
 */
internal suspend fun runClaimed(
    claim: Claim,
    graph: Graph,
    migrations: List<StateMigration>,
    store: CheckpointStore,
    runOptions: RunOptions,
    retryMillis: Long,
    context: CoroutineContext,
): Outcome? = try {
    withContext(context) {
        // A first claim has no checkpoint yet (the runtime refuses to start over one that exists): one read less.
        val latest = if (claim.attempt == 1) null else store.latest(claim.runId)
        when (latest?.status) {
            null -> outcomeOf(retryMillis, graph.invoke(StateJson.decode(graph, claim.input), runOptions))
            Status.COMPLETED.name -> Outcome(
                FleetStatus.COMPLETED,
                output = StateJson.encode(graph.stateAt(store, claim.runId, migrations = migrations)),
            )
            Status.FAILED.name -> Outcome(
                FleetStatus.FAILED,
                error = "The run's last checkpoint records that it failed; fork it to run it again.",
            )
            else -> {
                // Answers apply while the run is still where it paused; once it checkpointed past that point
                // (an earlier claim resumed it, then died) they were consumed already.
                val answers = if (latest.status == Status.INTERRUPTED.name) claim.answers else emptyMap()
                outcomeOf(retryMillis, graph.resume(claim.runId, runOptions, answers))
            }
        }
    }
} catch (e: GraphRunException) {
    outcomeOf(retryMillis, e.result)
} catch (e: ResumableRunException) {
    // The store stayed unreachable: the run stopped resumable (no FAILED checkpoint); back to the queue.
    Outcome(FleetStatus.RUNNING, retryInMillis = retryMillis, error = e.message)
} catch (e: RunOwnedException) {
    // The previous owner's store lease has not expired yet: try again once it may have.
    Outcome(FleetStatus.RUNNING, retryInMillis = retryMillis, error = e.message)
} catch (e: CheckpointStoreException) {
    Outcome(FleetStatus.RUNNING, retryInMillis = retryMillis, error = e.message)
} catch (e: CancellationException) {
    throw e
} catch (e: IllegalStateException) {
    // The run could not be taken up now, typically because a stalled worker's last checkpoint landed between
    // this worker's read of the position and its claim in the store: try again from the new position.
    if (claim.attempt < MAX_SETUP_ATTEMPTS) {
        Outcome(FleetStatus.RUNNING, retryInMillis = retryMillis, error = e.message)
    } else {
        Outcome(FleetStatus.FAILED, error = e.message ?: e.toString())
    }
} catch (e: Exception) {
    Outcome(FleetStatus.FAILED, error = e.message ?: e.toString())
}
