package dev.trellis.fleet

import dev.trellis.checkpoint.CheckpointRecord
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.future.future
import java.time.Duration
import java.util.concurrent.CompletableFuture
import javax.sql.DataSource

/**
 * [FleetClient] for Java: every call returns a [CompletableFuture] and never blocks the caller.
 *
 * ```java
 * try (JavaFleetClient client = new JavaFleetClient(dataSource)) {
 *     String runId = client.submit(new Submission("research", 1, "{\"question\": \"Why?\"}")).join();
 *     FleetResult result = client.await(runId).join();
 * }
 * ```
 */
public class JavaFleetClient(
    /** The Kotlin client it delegates to. */
    public val client: FleetClient,
) : AutoCloseable {
    /** A client of the queue in [schema] (default `trellis`) of [dataSource]. */
    @JvmOverloads
    public constructor(dataSource: DataSource, schema: String = "trellis") : this(FleetClient(dataSource, schema))

    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.IO)

    /**
     * Queues [submission]; completes with its run id, or exceptionally with the [IllegalArgumentException] of
     * [FleetClient.submit] (nothing is written then).
     */
    public fun submit(submission: Submission): CompletableFuture<String> = scope.future {
        client.submit(submission).runId
    }

    /** Completes when run [runId] settles (COMPLETED, FAILED or PAUSED), with its result. */
    public fun await(runId: String): CompletableFuture<FleetResult> = scope.future { client.run(runId).await() }

    /** Run [runId] as it is now. */
    public fun result(runId: String): CompletableFuture<FleetResult> = scope.future { client.run(runId).result() }

    /** Answers the pending interrupt of node [nodeId] of the PAUSED run [runId] and queues it again. */
    public fun answer(runId: String, nodeId: String, answer: String): CompletableFuture<Void?> = scope.future {
        client.run(runId).answer(nodeId, answer)
        null
    }

    /** The checkpoints of run [runId], oldest first. */
    public fun history(runId: String): CompletableFuture<List<CheckpointRecord>> =
        scope.future { client.run(runId).history() }

    /** Run [runId]'s row in the queue (see [FleetClient.info]); completes with null when the queue has no such run. */
    public fun info(runId: String): CompletableFuture<FleetRunInfo?> = scope.future { client.info(runId) }

    /** Runs whose claim is lost now (see [FleetClient.lostClaims]). */
    public fun lostClaims(): CompletableFuture<List<FleetRunInfo>> = scope.future { client.lostClaims() }

    /** How many runs of each graph version are in each status. */
    public fun counts(): CompletableFuture<List<GraphCounts>> = scope.future { client.counts() }

    /** Deletes runs finished more than [olderThan] ago, with their checkpoints; completes with how many. */
    public fun purgeFinished(
        olderThan: Duration,
    ): CompletableFuture<Int> = scope.future { client.purgeFinished(olderThan) }

    /** Cancels pending calls and closes the client. */
    override fun close() {
        scope.cancel()
        client.close()
    }
}
