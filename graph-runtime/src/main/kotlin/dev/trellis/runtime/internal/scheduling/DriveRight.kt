package dev.trellis.runtime.internal.scheduling

import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.execution.StallMonitor
import dev.trellis.runtime.internal.execution.StartCosts
import kotlinx.coroutines.channels.Channel
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds

/** How long the queue may make no progress behind a node believed quick before a runner is started. */
internal val STALL_CHECK: Duration = 1.milliseconds

/**
 * How finished executions reach the scheduler, and who runs it: the *drive right*.
 *
 * Exactly one coroutine at a time drives the scheduler (merges, decides edges, starts nodes): the one holding
 * the right. The run's loop holds it first. A node coroutine that finishes and finds nobody driving ([handOvers] at
 * 0) takes the right with its execution and drives the scheduler itself, on its own thread, instead of waking the
 * loop; otherwise it puts its execution in [inbox] and counts itself in [handOvers] (taking the right after all if
 * the driver let it go meanwhile: the count was 0), and the current driver finds it before it lets go. The counter
 * is the number of hand-overs the driver has not accounted for yet plus one for the driver itself; letting go
 * subtracts what was accounted for, and fails (the driver goes on) when something arrived meanwhile. This is the
 * single-writer "drain loop" of Reactive Streams implementations: no lock, and the scheduler's state is only touched
 * by the holder, with the counter's atomic updates ordering one holder's writes before the next one's reads.
 *
 * Begun executions wait in [queue] until a *worker* starts them: the run's loop, or a *runner* coroutine on the node
 * dispatcher. A worker starts each execution undispatched (in its own thread, until the node finishes or first
 * suspends), so a node that finishes without suspending costs no dispatch, and one that suspends frees the worker at
 * once. Before starting a node that may keep it busy (see [StartCosts]) a worker stops counting itself,
 * so that queued work never waits behind a long node: whoever then finds work queued and no worker counted starts a
 * runner. Quick nodes of a wide fan-out are thus started one after another by one thread, with no wake-ups. A node
 * that was quick before may not be this time; while work is queued behind a quick node, the [StallMonitor] checks
 * every [STALL_CHECK] that the queue makes progress, and a runner is started when it does not.
 *
 * A driver that must stop before the run ends (its coroutine was cancelled, or nothing runs any more) passes
 * the right, without letting go, to the loop through [wake].
 */
internal class DriveRight {
    /** Hand-overs the driver has not accounted for yet, plus one for the driver itself. */
    private val handOvers = AtomicInteger(1)

    /** Finished executions not yet completed by the driver. */
    private val inbox = ConcurrentLinkedQueue<Execution>()

    /** Executions begun by the driver and not yet started. */
    val queue = ConcurrentLinkedQueue<Execution>()

    /**
     * The coroutines that will poll [queue] soon: working through it and not busy with a node that may take long.
     * The run's loop is one of them when the drive right is made (the loop makes it and works the queue next).
     */
    private val workers = AtomicInteger(1)

    /** Counts the caller as a worker (again), or a runner started for a stalled queue. */
    fun join() {
        workers.incrementAndGet()
    }

    /**
     * Uncounts the caller, about to stop polling or to start a node that may take long. Returns true when work is
     * queued and nobody polls any more: the caller must then start a runner (already counted).
     */
    fun leave(): Boolean {
        workers.decrementAndGet()
        return needsRunner()
    }

    /**
     * After queueing: true when work is queued and no worker will poll it; the caller must start a runner, which is
     * counted already. The queue is written before the count is read, and workers uncount themselves before they
     * read the queue, so one of the two always sees the other.
     */
    fun needsRunner(): Boolean = !queue.isEmpty() && workers.get() == 0 && workers.compareAndSet(0, 1)

    /**
     * Counts polls of [queue]; the [StallMonitor] compares two readings (racy increments still change it). Read
     * volatile, written with a release store ([countPoll]): no fence per poll.
     */
    @Volatile
    @JvmField
    var polls: Int = 0

    /** Counts a poll of [queue] ([polls]). */
    fun countPoll() {
        POLLS.lazySet(this, polls + 1)
    }

    /** The [StallMonitor]'s last reading of [polls]. */
    var pollsSeen: Int = -1

    /** Set while the [StallMonitor] watches this run. */
    val watching = AtomicBoolean(false)

    /** Set while a runner started for a stalled queue has not begun polling. */
    val stallRunnerPending = AtomicBoolean(false)

    /** Set when the run's loop ended: the monitor drops the run. */
    @Volatile
    var closed: Boolean = false

    /** What the [StallMonitor] calls when [queue] made no progress: start one more runner. */
    lateinit var stalled: () -> Unit

    /** Signals the loop that the drive right has been passed to it. */
    val wake = Channel<Unit>(Channel.CONFLATED)

    /**
     * A finished execution its own coroutine holds the drive right for ([offer] found nobody driving): the holder's
     * alone, completed before the [inbox]'s ([takeFinished]).
     */
    private var own: Execution? = null

    /**
     * Hands a finished execution over; true when the caller now holds the drive right. Taking a free right takes
     * the execution along without the inbox (no queue node, no queue update): the common case of a branch that
     * finishes while nobody drives.
     */
    fun offer(execution: Execution): Boolean {
        if (handOvers.compareAndSet(0, 1)) {
            own = execution
            return true
        }
        inbox.offer(execution)
        return handOvers.getAndIncrement() == 0
    }

    /** The next finished execution for the holder of the drive right to complete, or null. */
    fun takeFinished(): Execution? {
        val execution = own ?: return inbox.poll()
        own = null
        return execution
    }

    /**
     * Lets the drive right go after [accounted] hand-overs (1 for the holder itself at first); returns how many
     * arrived meanwhile, 0 when the right was let go.
     */
    fun release(accounted: Int): Int = handOvers.addAndGet(-accounted)

    /** Passes the drive right (held by the caller) to the loop. */
    fun passToLoop() {
        wake.trySend(Unit)
    }
}

/** [DriveRight.polls]'s release stores. */
private val POLLS: AtomicIntegerFieldUpdater<DriveRight> =
    AtomicIntegerFieldUpdater.newUpdater(DriveRight::class.java, "polls")
