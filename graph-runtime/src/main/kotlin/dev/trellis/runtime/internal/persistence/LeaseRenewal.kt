package dev.trellis.runtime.internal.persistence

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeoutOrNull
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong

/**
 * The thread lease renewals are timed on, shared by all checkpointed runs of the JVM and started with the first.
 * Renewal must not depend on the run's dispatcher being free: nodes that block their threads (a `runBlocking`
 * caller's only thread, or every thread of `Dispatchers.Default`) would otherwise delay it past the lease's expiry,
 * and another worker would take a healthy run over. The renewal itself runs on the store's dispatcher; this thread
 * only waits between renewals, so one is enough for any number of runs.
 *
 * A run in real time is [held] from its claim to its release: one sweeper on this thread sleeps until the earliest
 * renewal due among the held runs ([RunLease.renewalDue], half the lease's remaining time) and starts the
 * renewals that are due. Holding and dropping a run is a set insertion and removal on the run's own thread; the
 * sweeper is woken only when a run needs a renewal earlier than it planned to wake (a shorter lease, or the first
 * run after a long idle time), so runs that end within half their lease cost this thread nothing. (A run in virtual
 * time times its renewals on its own scheduler instead: [RunLease.keepAlive].)
 */
internal object LeaseRenewal {
    val dispatcher: CoroutineDispatcher by lazy {
        Executors.newSingleThreadExecutor { task ->
            Thread(task, "trellis-lease-renewal").apply { isDaemon = true }
        }.asCoroutineDispatcher()
    }

    private val scope by lazy { CoroutineScope(dispatcher + SupervisorJob()) }

    /** The runs whose leases the sweeper renews. */
    private val held: MutableSet<RunLease> = ConcurrentHashMap.newKeySet()

    /**
     * When (`System.nanoTime`) the sweeper wakes next; [Long.MAX_VALUE] while it looks at the held runs or holds none,
     * so that a run held then wakes it.
     */
    private val wakeAt = AtomicLong(Long.MAX_VALUE)

    /** Wakes the sweeper before [wakeAt]. */
    private val wake = Channel<Unit>(Channel.CONFLATED)

    private val started = AtomicBoolean()

    /**
     * The shortest renewal interval of the runs held so far (nanoseconds): how long the sweeper waits after finding
     * no run held, so that runs that come and go within half their lease do not wake it.
     */
    private val shortest = AtomicLong(Long.MAX_VALUE)

    /** How many runs were ever held: the sweeper tells from it whether runs came and went while it slept. */
    private val holds = AtomicLong()

    /** Renews [writer]'s lease when due ([RunLease.renewalDue], [interval] from now), until [drop]. */
    fun hold(writer: RunLease, interval: Long) {
        held.add(writer)
        holds.incrementAndGet()
        if (interval < shortest.get()) shortest.set(interval)
        if (!started.get() && started.compareAndSet(false, true)) scope.launch { sweep() }
        due(writer)
    }

    /** Stops renewing [writer]'s lease (a renewal under way still ends, see [RunLease.renewOnce]). */
    fun drop(writer: RunLease) {
        held.remove(writer)
    }

    /** Tells the sweeper that [writer]'s next renewal is due at [RunLease.renewalDue]. */
    fun due(writer: RunLease) {
        if (writer.renewalDue < wakeAt.get()) wake.trySend(Unit)
    }

    private suspend fun sweep() {
        var seen = -1L
        while (true) {
            wakeAt.set(Long.MAX_VALUE) // a run held while the sweeper looks wakes it again at once
            val now = System.nanoTime()
            var next = Long.MAX_VALUE
            for (writer in held) {
                val due = writer.renewalDue
                if (due <= now) {
                    writer.renewalDue = Long.MAX_VALUE // renewing: not due again until it ended
                    scope.launch { writer.renewOnce() }
                } else if (due < next) {
                    next = due
                }
            }
            // None held, but runs came and went since the last look: wait the shortest interval (a run held meanwhile
            // is due later and need not wake the sweeper); none at all: wait until one is held.
            val count = holds.get()
            if (next == Long.MAX_VALUE && count != seen) next = now + shortest.get()
            seen = count
            wakeAt.set(next)
            if (next == Long.MAX_VALUE) {
                wake.receive()
            } else {
                withTimeoutOrNull(maxOf((next - now) / 1_000_000, 1)) { wake.receive() }
            }
        }
    }
}
