package dev.trellis.runtime.internal.execution

import dev.trellis.runtime.internal.scheduling.DriveRight
import dev.trellis.runtime.internal.scheduling.STALL_CHECK
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.locks.LockSupport

/**
 * One daemon thread for the whole JVM that checks, every [STALL_CHECK], that the queues of the watched runs make
 * progress (see [DriveRight]): a run is watched while a worker starts a node believed quick with work queued behind
 * it, and after any enqueue while a worker is counted (that worker may be inside such a node). When a queue made
 * no progress for a whole check interval, the node was not quick this time, and the run gets another runner. The thread sleeps in steps of [STALL_CHECK] while something is watched and parks when
 * nothing is, so watching a run costs no wake-up of any thread while runs keep coming.
 */
internal object StallMonitor {
    private val watched = ConcurrentLinkedQueue<DriveRight>()

    @Volatile
    private var parked = false

    private val thread: Thread by lazy {
        Thread(::monitor, "trellis-stall-monitor").apply {
            isDaemon = true
            start()
        }
    }

    /** Watches [driveRight] until its queue is empty or its run ended; nothing when it is watched already. */
    fun watch(driveRight: DriveRight) {
        // A plain read first: a worker of a wide fan-out calls this per node, and the run is then watched already.
        if (driveRight.watching.get() || !driveRight.watching.compareAndSet(false, true)) return
        driveRight.pollsSeen = -1
        watched.offer(driveRight)
        val monitor = thread
        if (parked) LockSupport.unpark(monitor)
    }

    private fun monitor() {
        while (true) {
            if (watched.isEmpty()) {
                // Set before the second look, read by watch() after its offer: one of the two sees the other.
                parked = true
                if (watched.isEmpty()) LockSupport.park(this)
                parked = false
                continue
            }
            try {
                Thread.sleep(STALL_CHECK.inWholeMilliseconds)
            } catch (_: InterruptedException) {
                // Nothing interrupts this thread on purpose; go on checking.
            }
            check()
        }
    }

    private fun check() {
        val each = watched.iterator()
        while (each.hasNext()) {
            val driveRight = each.next()
            if (driveRight.closed || driveRight.queue.isEmpty()) {
                each.remove()
                driveRight.watching.set(false)
                // An enqueue in between saw the run still watched and did not register it again: look once more.
                if (!driveRight.closed && !driveRight.queue.isEmpty()) watch(driveRight)
                continue
            }
            val polls = driveRight.polls
            try {
                if (polls == driveRight.pollsSeen) driveRight.stalled()
            } catch (e: Throwable) {
                // A dispatcher that refused the runner must not stop the monitor of every run in the JVM.
                each.remove()
                driveRight.watching.set(false)
                Thread.currentThread().uncaughtExceptionHandler?.uncaughtException(Thread.currentThread(), e)
                continue
            }
            driveRight.pollsSeen = polls
        }
    }
}
