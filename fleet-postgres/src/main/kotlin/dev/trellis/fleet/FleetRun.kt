package dev.trellis.fleet

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.fleet.internal.answer

/**
 * A handle on one run of the fleet's queue, from [FleetClient.submit] or [FleetClient.run]; any process may hold one.
 *
 * ```kotlin
 * val result = run.await()
 * when (result.status) {
 *     FleetStatus.PAUSED -> run.answer(result.interrupts.single().nodeId, "yes")
 *     FleetStatus.COMPLETED -> println(result.state(graph))
 *     else -> println(result.error)
 * }
 * ```
 */
public class FleetRun internal constructor(
    private val client: FleetClient,
    /** The run's id. */
    public val runId: String,
) {
    /**
     * The run as it is now.
     * @throws NoSuchElementException when the queue has no such run (never submitted, or deleted by retention).
     */
    public suspend fun result(): FleetResult =
        client.result(runId) ?: throw NoSuchElementException(
            "No run '$runId' in the queue (schema ${client.schema}); it was never submitted, or retention deleted it.",
        )

    /** The run's status now. */
    public suspend fun status(): FleetStatus = result().status

    /**
     * Suspends until the run settles — COMPLETED, FAILED, or PAUSED for an answer — and returns it. Woken by the
     * worker's notification, with a poll every [pollMillis] as the fallback.
     */
    public suspend fun await(pollMillis: Long = DEFAULT_POLL_MILLIS): FleetResult {
        while (true) {
            val now = result()
            if (now.status.settled) return now
            client.awaitChange(runId, pollMillis)
        }
    }

    /**
     * Answers the single pending interrupt of the PAUSED run and queues it again.
     * @throws IllegalStateException when the run is not PAUSED; IllegalArgumentException when it has several interrupts.
     */
    public suspend fun answer(answer: String) {
        client.io { client.queue.answer(runId, null, answer) }
    }

    /**
     * Answers pending interrupts of the PAUSED run by node id and queues it again.
     * @throws IllegalStateException when the run is not PAUSED; IllegalArgumentException naming a node without one.
     */
    public suspend fun answer(answers: Map<String, String>) {
        client.io { client.queue.answer(runId, answers, null) }
    }

    /** Answers the pending interrupt of node [nodeId]. */
    public suspend fun answer(nodeId: String, answer: String): Unit = answer(mapOf(nodeId to answer))

    /** The run's checkpoints in the store, oldest first: what it did so far, written by whichever workers ran it. */
    public suspend fun history(): List<CheckpointRecord> = client.store.history(runId)

    override fun toString(): String = "FleetRun($runId)"

    private companion object {
        const val DEFAULT_POLL_MILLIS = 1_000L
    }
}
