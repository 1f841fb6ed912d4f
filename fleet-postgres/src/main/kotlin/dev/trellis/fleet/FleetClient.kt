package dev.trellis.fleet

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.fleet.internal.Listener
import dev.trellis.fleet.internal.Queue
import dev.trellis.fleet.internal.Tables
import dev.trellis.fleet.internal.counts
import dev.trellis.fleet.internal.lapsed
import dev.trellis.fleet.internal.list
import dev.trellis.fleet.internal.purge
import dev.trellis.fleet.internal.read
import dev.trellis.fleet.internal.result
import dev.trellis.fleet.internal.submit
import dev.trellis.fleet.internal.tablesVersion
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import javax.sql.DataSource

/**
 * Submits runs to the fleet's queue in PostgreSQL and follows them, from any JVM: no graph needs to be loaded here,
 * the workers that registered it run it. Its Java twin is [JavaFleetClient].
 *
 * ```kotlin
 * val client = FleetClient(dataSource)
 * val run = client.submit(Submission("research", 1, """{"question": "Why is the sky blue?"}"""))
 * val result = run.await()                      // COMPLETED, FAILED or PAUSED
 * if (result.status == FleetStatus.PAUSED) run.answer("yes")
 * ```
 *
 * @param dataSource where connections come from (use a pool); the client does not close it.
 * @param schema the schema of the queue and the checkpoint store, as the workers use it.
 * @param dispatcher where blocking JDBC calls run.
 */
public class FleetClient @JvmOverloads constructor(
    private val dataSource: DataSource,
    public val schema: String = "trellis",
    private val dispatcher: CoroutineDispatcher = Dispatchers.IO,
) : AutoCloseable {
    internal val queue = Queue(dataSource, Tables(schema))

    /** The checkpoint store the workers write, for reading runs' histories. */
    public val store: CheckpointStore = PostgresCheckpointStore(dataSource, schema, dispatcher = dispatcher)

    private val waiters = ConcurrentHashMap<String, MutableSet<CompletableDeferred<Unit>>>()
    private var listener: Listener? = null

    /**
     * Puts [submission] in the queue and wakes a worker. Either the run is queued, or nothing is written.
     *
     * @throws IllegalArgumentException when no worker registered the graph version, the input is not a JSON object of
     *   the graph's keys with values of their kinds, or the run id is already in the queue.
     */
    public suspend fun submit(submission: Submission): FleetRun {
        withContext(dispatcher) { queue.submit(submission) }
        return FleetRun(this, submission.runId)
    }

    /** A handle on run [runId] of the queue, submitted by any process. */
    public fun run(runId: String): FleetRun = FleetRun(this, runId)

    /** Up to [limit] runs in [status], oldest submission first (for example the PAUSED ones waiting for answers). */
    @JvmOverloads
    public suspend fun list(status: FleetStatus, limit: Int = DEFAULT_LIMIT): List<FleetRunInfo> =
        withContext(dispatcher) { queue.list(status, limit) }

    /**
     * Whether the fleet's tables exist in [schema]. Like [info], [infos] and [lostClaims], it only reads: it never
     * creates the tables (every other call does, on first use).
     */
    public suspend fun hasQueue(): Boolean =
        withContext(dispatcher) { queue.connectReading { c -> queue.tablesVersion(c) > 0 } }

    /**
     * Run [runId]'s row in the queue — status, worker, attempts, claim and heartbeat times, lost claims — or null when
     * the queue has no such run (or there is no queue in [schema]).
     */
    public suspend fun info(runId: String): FleetRunInfo? = infos(listOf(runId)).firstOrNull()

    /** The rows of [runIds] that the queue has (by run id, in one query); those it has not are left out. */
    public suspend fun infos(runIds: Collection<String>): List<FleetRunInfo> =
        withContext(dispatcher) { queue.read(runIds) }

    /**
     * Up to [limit] runs whose claim is lost now: RUNNING under a worker whose lease lapsed (the worker died,
     * stalled or lost the database), the longest lapsed first. Any worker of their graph takes them over.
     */
    @JvmOverloads
    public suspend fun lostClaims(limit: Int = DEFAULT_LIMIT): List<FleetRunInfo> {
        require(limit >= 1) { "limit must be at least 1, but was $limit." }
        return withContext(dispatcher) { queue.lapsed(limit) }
    }

    /** How many runs of each graph version are queued, running, paused, completed and failed. */
    public suspend fun counts(): List<GraphCounts> = withContext(dispatcher) { queue.counts() }

    /**
     * Deletes up to [limit] runs that finished (COMPLETED or FAILED) more than [olderThan] ago, with their
     * checkpoints, and returns how many. Workers with `FleetWorkerOptions.retention` do this on their own.
     */
    @JvmOverloads
    public suspend fun purgeFinished(olderThan: Duration, limit: Int = PURGE_BATCH): Int =
        purge(queue, store, olderThan, limit, dispatcher)

    internal suspend fun result(runId: String): FleetResult? = io { queue.result(runId) }

    internal suspend fun <T> io(block: () -> T): T = withContext(dispatcher) { block() }

    /** Suspends until the run's row may have changed: a notification for it, or [pollMillis] passed. */
    internal suspend fun awaitChange(runId: String, pollMillis: Long) {
        ensureListening()
        val signal = CompletableDeferred<Unit>()
        val set = waiters.computeIfAbsent(runId) { ConcurrentHashMap.newKeySet() }
        set += signal
        try {
            kotlinx.coroutines.withTimeoutOrNull(pollMillis) { signal.await() }
        } finally {
            set -= signal
            if (set.isEmpty()) waiters.remove(runId, set)
        }
    }

    private fun ensureListening() {
        if (listener != null) return
        synchronized(this) {
            if (listener != null) return
            queue.tables.ensure(dataSource)
            listener = Listener(dataSource, queue.tables.doneChannel, LISTEN_RETRY_MILLIS, {}) { runId ->
                if (runId == null) {
                    waiters.values.forEach { set -> set.forEach { it.complete(Unit) } }
                } else {
                    waiters[runId]?.forEach { it.complete(Unit) }
                }
            }.also { it.start() }
        }
    }

    /** Stops listening for notifications. The data source stays open. */
    override fun close() {
        synchronized(this) {
            listener?.stop()
            listener = null
        }
    }

    override fun toString(): String = "FleetClient(schema=$schema)"

    internal companion object {
        const val DEFAULT_LIMIT = 100
        const val PURGE_BATCH = 1_000
        const val LISTEN_RETRY_MILLIS = 1_000L

        suspend fun purge(
            queue: Queue,
            store: CheckpointStore,
            olderThan: Duration,
            limit: Int,
            dispatcher: CoroutineDispatcher,
        ): Int {
            require(!olderThan.isNegative) { "olderThan must not be negative, but was $olderThan." }
            require(limit >= 1) { "limit must be at least 1, but was $limit." }
            val ids = withContext(dispatcher) { queue.purge(olderThan.toMillis(), limit) }
            for (id in ids) store.delete(id)
            return ids.size
        }
    }
}
