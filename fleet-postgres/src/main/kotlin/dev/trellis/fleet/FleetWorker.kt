package dev.trellis.fleet

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.fleet.internal.Claim
import dev.trellis.fleet.internal.ClaimPacing
import dev.trellis.fleet.internal.FleetStore
import dev.trellis.fleet.internal.Listener
import dev.trellis.fleet.internal.Outcome
import dev.trellis.fleet.internal.Queue
import dev.trellis.fleet.internal.StateJson
import dev.trellis.fleet.internal.StoreLeases
import dev.trellis.fleet.internal.Tables
import dev.trellis.fleet.internal.registerGraph
import dev.trellis.fleet.internal.runClaimed
import dev.trellis.graph.Graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunControl
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.StateMigration
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.time.Duration
import java.util.concurrent.ArrayBlockingQueue
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.Executors
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import javax.sql.DataSource

/**
 * A worker process of the fleet: runs the graphs it [registered][register] from the queue in PostgreSQL, with every
 * step checkpointed in the `PostgresCheckpointStore` of the same schema.
 *
 * Once [started][start] it claims runnable runs of its graph versions — new ones, answered ones and orphans whose
 * worker's lease expired — with `FOR UPDATE SKIP LOCKED`, at most [FleetWorkerOptions.concurrency] at once; it is woken
 * by `NOTIFY` on every submission and polls as the fallback. A heartbeat on a thread of its own extends the leases
 * of its runs, so nodes that block threads cannot starve it; a run another worker took over is cancelled here, and
 * its late checkpoint writes are refused by the store's fencing. [shutdown] stops claiming, drains the running runs
 * (they checkpoint and go back to the queue for other workers) and waits for them.
 *
 * ```kotlin
 * val worker = FleetWorker(dataSource, FleetWorkerOptions(concurrency = 32))
 *     .register(research, version = 2)
 *     .start()
 * Runtime.getRuntime().addShutdownHook(Thread { worker.shutdown() })
 * ```
 *
 * @param dataSource where connections come from (use a pool of at least `concurrency + 2`); not closed by the worker.
 */
public class FleetWorker @JvmOverloads constructor(
    private val dataSource: DataSource,
    /** How the worker works. */
    public val options: FleetWorkerOptions = FleetWorkerOptions(),
) : AutoCloseable {
    /** This worker's id. */
    public val id: String get() = options.workerId

    /** The checkpoint store the worker's runs write, with the worker's lease duration. */
    public val store: CheckpointStore get() = fleetStore

    private val fleetStore = FleetStore(
        PostgresCheckpointStore(
            dataSource,
            options.schema,
            leaseDuration = options.leaseDuration,
            groupCommit = options.groupCommit,
            unavailableAfter = options.unavailableAfter,
        ),
    )
    private val storeLeases = StoreLeases(options.schema)

    private val tables = Tables(options.schema)
    private val queue = Queue(dataSource, tables, options.unavailableAfter)
    private val leaseMillis = options.leaseDuration.toMillis()
    private val retryMillis = leaseMillis / RETRY_FRACTION
    private val observer = options.observer ?: object : FleetObserver {}

    private class Registration(val graph: Graph, val version: Int, val migrations: List<StateMigration>)

    private class Active(val attempt: Int) {
        lateinit var job: Job

        @Volatile
        var finishing = false

        /** Whether the claim was reported lost ([FleetObserver.lost]): once per claim. */
        val lost = AtomicBoolean()
    }

    private val registered = LinkedHashMap<String, Registration>()
    private val runnable = ConcurrentHashMap<String, Registration>()
    private val active = ConcurrentHashMap<String, Active>()
    private val control = RunControl()
    private val scope = CoroutineScope(SupervisorJob() + (options.dispatcher ?: Dispatchers.Default))
    private val wake = ArrayBlockingQueue<Boolean>(1)

    @Volatile
    private var claiming = false
    private var state = State.NEW
    private var claimThread: Thread? = null
    private var heartbeat: ScheduledExecutorService? = null
    private var listener: Listener? = null
    private var lastPurge = System.nanoTime()

    private enum class State { NEW, STARTED, STOPPED }

    /** How many runs the worker is running now. */
    public val activeRuns: Int get() = active.size

    /**
     * Lets this worker run [graph] as version [version] of `graph.id`. Runs of the versions in [migratesFrom] (earlier
     * versions of the same graph) are claimed too and continue on this graph, their checkpoints read with
     * [migrations]; without it a run never moves to another version. Call before [start].
     *
     * @throws IllegalStateException after [start]; IllegalArgumentException when the version is registered twice.
     */
    @JvmOverloads
    public fun register(
        graph: Graph,
        version: Int,
        migrations: List<StateMigration> = emptyList(),
        migratesFrom: Set<Int> = emptySet(),
    ): FleetWorker {
        synchronized(this) {
            check(state == State.NEW) { "Register graphs before FleetWorker.start(); worker '$id' already started." }
            val key = Queue.graphKey(graph.id, version)
            val registration = Registration(graph, version, migrations)
            require(registered.put(key, registration) == null) {
                "Graph '${graph.id}' version $version is already registered with worker '$id'."
            }
            runnable[key] = registration
            for (from in migratesFrom) {
                require(from != version) { "A version cannot migrate from itself ($version)." }
                runnable.putIfAbsent(Queue.graphKey(graph.id, from), registration)
            }
        }
        return this
    }

    /**
     * Records the registered graph versions in the queue (so that clients may submit to them), then starts claiming.
     * Returns this worker.
     */
    public fun start(): FleetWorker {
        synchronized(this) {
            check(state == State.NEW) { "Worker '$id' was already started." }
            require(registered.isNotEmpty()) { "Worker '$id' has no graph to run; register one before start()." }
            tables.ensure(dataSource)
            // The store's tables too (a read creates them): claims take store leases in the queue's transaction.
            runBlocking(Dispatchers.IO) { fleetStore.latest("trellis-fleet-start") }
            for ((_, r) in registered) {
                queue.registerGraph(r.graph.id, r.version, r.graph.schema.name, StateJson.shapes(r.graph.schema))
            }
            claiming = true
            state = State.STARTED
            if (options.listen) {
                listener =
                    Listener(dataSource, tables.workChannel, options.pollInterval.toMillis(), observer::problem) {
                        if (it == null || runnable.containsKey(it)) wake.offer(true)
                    }.also { it.start() }
            }
            val beat = options.heartbeat.toMillis()
            heartbeat = Executors.newSingleThreadScheduledExecutor { r ->
                Thread(r, "trellis-fleet-heartbeat").apply { isDaemon = true }
            }.also { it.scheduleWithFixedDelay(::beat, beat, beat, TimeUnit.MILLISECONDS) }
            claimThread = Thread(::claimLoop, "trellis-fleet-claim").apply {
                isDaemon = true
                start()
            }
        }
        return this
    }

    /**
     * Stops claiming, drains the running runs (each stops starting nodes, lets running ones finish, checkpoints and
     * goes back to the queue for another worker) and waits up to [timeout] for them; returns whether all ended.
     * Runs still going after [timeout] are cancelled here; their leases expire and other workers resume them.
     */
    @JvmOverloads
    public fun shutdown(timeout: Duration = Duration.ofSeconds(30)): Boolean {
        synchronized(this) {
            if (state != State.STARTED) {
                state = State.STOPPED
                return true
            }
            state = State.STOPPED
        }
        claiming = false
        wake.offer(true)
        claimThread?.join()
        control.drain()
        val deadline = System.nanoTime() + timeout.toNanos()
        control.awaitIdle(timeout.toMillis())
        while (active.isNotEmpty() && System.nanoTime() < deadline) {
            wake.poll(IDLE_CHECK_MILLIS, TimeUnit.MILLISECONDS) // finishing runs offer to wake
        }
        val drained = active.isEmpty()
        scope.cancel()
        heartbeat?.shutdownNow()
        listener?.stop()
        return drained
    }

    /** [shutdown] with its default timeout. */
    override fun close() {
        shutdown()
    }

    private fun claimLoop() {
        val keys = runnable.keys.toTypedArray()
        val poll = options.pollInterval.toMillis()
        val pacing = ClaimPacing(options.concurrency, poll)
        while (claiming) {
            pacing.gather({ active.size }, wake, { claiming })
            val free = options.concurrency - active.size
            pacing.backlog = false
            if (free > 0) {
                try {
                    val orphans = pacing.orphans()
                    val running = if (orphans) active.keys.toTypedArray() else emptyArray()
                    val claims = queue.claim(id, keys, free, leaseMillis, storeLeases, orphans, running)
                    for (claim in claims) launch(claim)
                    pacing.backlog = claims.size == free
                } catch (e: Exception) {
                    observer.problem(e)
                }
            }
            if (!pacing.backlog) wake.poll(poll, TimeUnit.MILLISECONDS)
            purgeIfDue()
        }
    }

    private fun launch(claim: Claim) {
        observer.claimed(claim.runId, claim.attempt)
        val entry = Active(claim.attempt)
        claim.granted?.let(fleetStore::grant)
        entry.job = scope.launch(start = CoroutineStart.LAZY) {
            var outcome: Outcome? = null
            try {
                outcome = execute(claim, entry)
            } finally {
                // The store lease is released with the recorded end, in one transaction; alone when nothing is recorded.
                val release = fleetStore.takeRelease(claim.runId)
                val ended = outcome
                try {
                    withContext(NonCancellable + Dispatchers.IO) {
                        if (ended != null) {
                            entry.finishing = true
                            record(claim, entry, ended, release)
                        } else if (release != null) {
                            releaseAlone(release)
                        }
                    }
                } finally {
                    // Also when the run was cancelled (a lost claim): withContext then throws on its way back.
                    active.remove(claim.runId, entry)
                    wake.offer(true)
                }
            }
        }
        active[claim.runId] = entry
        entry.job.start()
    }

    /** Runs or resumes the claimed run; null when the claim was lost (nothing to record). */
    private suspend fun execute(claim: Claim, entry: Active): Outcome? {
        val registration = runnable.getValue(claim.graphKey)
        val graph = registration.graph
        val checkpointing = Checkpointing(store, owner = id, migrations = registration.migrations)
        val runOptions = RunOptions(
            runId = claim.runId,
            dispatcher = options.dispatcher,
            checkpointing = checkpointing,
            control = control,
        )
        val context = FleetRunContext(claim.runId, claim.attempt, id, tables.runs) { lose(claim.runId, entry) }
        return runClaimed(claim, graph, registration.migrations, store, runOptions, retryMillis, context)
    }

    private suspend fun releaseAlone(lease: Lease) {
        try {
            fleetStore.release(lease)
        } catch (e: Exception) {
            observer.problem(e) // the lease expires on its own
        }
    }

    private suspend fun record(claim: Claim, entry: Active, outcome: Outcome, release: Lease?) {
        val recorded = try {
            queue.finish(
                id,
                claim.runId,
                claim.attempt,
                outcome.status,
                outcome.output,
                outcome.error,
                outcome.interrupts,
                outcome.retryInMillis,
                release?.let { storeLeases to it },
            )
        } catch (e: Exception) {
            observer.problem(e)
            release?.let { releaseAlone(it) }
            return // the lease expires and another worker finds the run's end in its checkpoints
        }
        if (!recorded) return reportLost(claim.runId, entry)
        observer.finished(claim.runId, claim.attempt, outcome.status)
    }

    private fun beat() {
        val snapshot = active.entries.filter { !it.value.finishing }.associate { it.key to it.value }
        if (snapshot.isEmpty()) return
        val held = try {
            // Retried within one heartbeat period; the next beat tries again.
            queue.heartbeat(id, snapshot.keys.toTypedArray(), leaseMillis, options.heartbeat)
        } catch (e: Exception) {
            observer.problem(e)
            return
        }
        for ((runId, entry) in snapshot) {
            if (held[runId] == entry.attempt || entry.finishing || active[runId] !== entry) continue
            lose(runId, entry)
        }
    }

    /**
     * Cancels [entry]'s run, whose claim another worker took over (or that ended), and reports it lost: found by the
     * heartbeat, or by a node's [FleetRunContext.checkHeld], whichever comes first.
     */
    private fun lose(runId: String, entry: Active) {
        entry.job.cancel(CancellationException("Worker '$id' lost run '$runId' (claim ${entry.attempt})."))
        reportLost(runId, entry)
    }

    private fun reportLost(runId: String, entry: Active) {
        if (entry.lost.compareAndSet(false, true)) observer.lost(runId, entry.attempt)
    }

    private fun purgeIfDue() {
        val retention = options.retention ?: return
        if (System.nanoTime() - lastPurge < PURGE_EVERY_NANOS) return
        lastPurge = System.nanoTime()
        scope.launch(Dispatchers.IO) {
            try {
                FleetClient.purge(queue, store, retention, FleetClient.PURGE_BATCH, Dispatchers.IO)
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                observer.problem(e)
            }
        }
    }

    override fun toString(): String = "FleetWorker($id, graphs=${registered.keys})"

    private companion object {
        const val RETRY_FRACTION = 4L
        const val IDLE_CHECK_MILLIS = 50L
        val PURGE_EVERY_NANOS: Long = TimeUnit.SECONDS.toNanos(60)
    }
}
