package dev.trellis.runtime

import java.util.concurrent.TimeUnit
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock

/**
 * A remote control for runs: [drain] asks them to stop gracefully, for deploys and shutdowns.
 *
 * A draining run starts no new node, lets running nodes finish, saves a checkpoint and ends `INTERRUPTED`,
 * ready to be resumed (by this process or another). Pass one control to any number of runs through
 * [RunOptions.control].
 *
 * ```kotlin
 * val control = RunControl()
 * control.drainOnShutdown()        // SIGTERM: drain, wait up to 30 s for the runs to checkpoint
 * graph.invoke(input, RunOptions(control = control, checkpointing = Checkpointing(store)))
 * ```
 */
public class RunControl {
    @Volatile
    private var draining = false
    private val listeners = java.util.concurrent.CopyOnWriteArrayList<() -> Unit>()
    private val active = java.util.concurrent.atomic.AtomicInteger()
    private val lock = ReentrantLock()
    private val idle = lock.newCondition()

    /** Whether [drain] was called. */
    public val isDraining: Boolean get() = draining

    /** The number of runs using this control that have not ended. */
    public val activeRuns: Int get() = active.get()

    /** Asks every run using this control to stop starting nodes, finish running ones, checkpoint and end. */
    public fun drain() {
        draining = true
        listeners.forEach { it() }
    }

    /**
     * Registers a JVM shutdown hook that drains the runs and waits up to [waitMillis] for them to end.
     * Returns the hook so it can be removed.
     */
    @JvmOverloads
    public fun drainOnShutdown(waitMillis: Long = 30_000): Thread {
        val hook = Thread({
            drain()
            awaitIdle(waitMillis)
        }, "trellis-drain")
        Runtime.getRuntime().addShutdownHook(hook)
        return hook
    }

    /** Blocks until no run uses this control or [timeoutMillis] passed; returns whether they all ended. */
    public fun awaitIdle(timeoutMillis: Long): Boolean {
        var left = TimeUnit.MILLISECONDS.toNanos(timeoutMillis)
        lock.withLock {
            while (active.get() > 0) {
                if (left <= 0) return false
                left = idle.awaitNanos(left)
            }
        }
        return true
    }

    internal fun register(onDrain: () -> Unit): () -> Unit {
        active.incrementAndGet()
        listeners += onDrain
        if (draining) onDrain()
        return {
            listeners -= onDrain
            if (active.decrementAndGet() == 0) lock.withLock { idle.signalAll() }
        }
    }
}
