package dev.trellis.fleet.internal

import java.util.concurrent.BlockingQueue
import java.util.concurrent.TimeUnit

/**
 * When a worker's claim loop claims, so that claims cost few transactions per run. Under a backlog (the last claim
 * filled every free slot) it gathers a few free slots — an eighth of [concurrency], for at most 10 ms — before
 * claiming again, so that one transaction claims several runs instead of one per finished run. Orphans (runs whose
 * worker's lease expired) appear only when a worker dies: they are looked for once per [pollMillis], not at every
 * claim.
 */
internal class ClaimPacing(private val concurrency: Int, private val pollMillis: Long) {
    private val gather = maxOf(1, concurrency / GATHER_FRACTION)
    private var orphansDue = 0L

    /** Whether the last claim filled every free slot. */
    var backlog: Boolean = false

    /** Under a backlog, waits on [wake] until [gather] slots are free or the gathering time is up. */
    fun gather(active: () -> Int, wake: BlockingQueue<Boolean>, claiming: () -> Boolean) {
        if (!backlog) return
        val deadline = System.nanoTime() + GATHER_NANOS
        while (claiming() && concurrency - active() in 1 until gather) {
            val left = deadline - System.nanoTime()
            if (left <= 0) return
            wake.poll(left, TimeUnit.NANOSECONDS)
        }
    }

    /** Whether this claim looks for orphans too. */
    fun orphans(): Boolean {
        val now = System.nanoTime()
        if (now - orphansDue < 0) return false
        orphansDue = now + TimeUnit.MILLISECONDS.toNanos(pollMillis)
        return true
    }

    private companion object {
        const val GATHER_FRACTION = 8
        val GATHER_NANOS: Long = TimeUnit.MILLISECONDS.toNanos(10)
    }
}
