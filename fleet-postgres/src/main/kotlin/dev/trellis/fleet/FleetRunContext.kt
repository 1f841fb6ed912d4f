package dev.trellis.fleet

import kotlinx.coroutines.currentCoroutineContext
import java.sql.Connection
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * Which claim of which run a node is executing under, in the coroutine context of every node a [FleetWorker] runs.
 *
 * A worker that stalled past its lease may still be executing a node when another worker has taken the run over; the
 * store rejects its checkpoints (fencing), but a node's own side effects are the node's business. A node that writes
 * to the same PostgreSQL database can fence them the same way: call [checkHeld] inside its transaction, before the
 * write; it locks the run's queue row (`FOR KEY SHARE`) so no other worker can claim the run until the transaction
 * ends, and fails if this claim is no longer current.
 *
 * ```kotlin
 * node("charge") {
 *     val claim = FleetRunContext.current()
 *     dataSource.connection.use { c ->
 *         c.autoCommit = false
 *         claim?.checkHeld(c)
 *         c.prepareStatement("INSERT INTO charges ...").executeUpdate()
 *         c.commit()
 *     }
 * }
 * ```
 */
public class FleetRunContext internal constructor(
    /** The run. */
    public val runId: String,
    /** The claim number: 1 for the first claim of the run, one more for each later claim by any worker. */
    public val attempt: Int,
    /** The worker executing it. */
    public val workerId: String,
    private val runsTable: String,
    /** Cancels the run this claim runs, as lost: called when [checkHeld] finds the claim no longer current. */
    private val lost: () -> Unit = {},
) : AbstractCoroutineContextElement(Key) {
    /**
     * Locks the run's queue row for the rest of [connection]'s transaction and checks that this claim still holds it.
     * Call it inside a transaction (auto-commit off), before the side effect.
     *
     * When the claim is no longer current, the worker cancels the run here, as its heartbeat would once it noticed:
     * the run ends as a lost claim — nothing of it is recorded as failed, and the claim that took it over goes on —
     * and the node's [LeaseLostException] is the cause of that cancellation, not a node failure.
     *
     * @throws LeaseLostException when another worker claimed the run since, or the run ended.
     */
    public fun checkHeld(connection: Connection) {
        val held = connection.prepareStatement(
            "SELECT 1 FROM $runsTable WHERE run_id = ? AND attempt = ? AND worker = ? AND status = 'RUNNING' " +
                "FOR KEY SHARE",
        ).use {
            it.setString(1, runId)
            it.setInt(2, attempt)
            it.setString(3, workerId)
            it.executeQuery().use { rs -> rs.next() }
        }
        if (!held) {
            lost()
            throw LeaseLostException(runId, attempt, workerId)
        }
    }

    override fun toString(): String = "FleetRunContext($runId, attempt=$attempt, worker=$workerId)"

    /** The context key. */
    public companion object Key : CoroutineContext.Key<FleetRunContext> {
        /** The claim the calling node runs under, or null outside a fleet worker. */
        public suspend fun current(): FleetRunContext? = currentCoroutineContext()[Key]
    }
}

/** A worker's claim of a run is no longer current: another worker took the run over, or it ended. */
public class LeaseLostException internal constructor(runId: String, attempt: Int, workerId: String) :
    IllegalStateException(
        "Worker '$workerId' no longer holds run '$runId' (claim $attempt): another worker claimed it after its lease " +
            "expired, or it ended. The side effect was not made; the run goes on elsewhere.",
    )
