package dev.trellis.runtime.internal.execution

import dev.trellis.runtime.internal.scheduling.DriveRight
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.NO_READING
import dev.trellis.runtime.internal.scheduling.loop
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch

/*
 * The workers of an [Engine]: begun executions are queued in the [DriveRight] ([enqueue]) and started by a *worker* —
 * the run's loop or a runner coroutine ([launchRunner]) polling the queue ([work]). Each start is undispatched
 * ([startNode]) and timed ([startTimed]) so that nodes known to start quickly are started one after another by one
 * thread; a finished node's coroutine hands its execution over and may drive the scheduler (`scheduling/Drive.kt`).
 */

/** A node whose start kept its worker busy for less than this (ns) is started by the worker that polls it. */
private const val QUICK_START_NANOS = 10_000L

/** Queues a begun execution for a worker; see [DriveRight]. */
internal fun Engine.enqueue(scope: CoroutineScope, execution: Execution) {
    val driveRight = driveRight ?: DriveRight().also {
        driveRight = it
        it.stalled = {
            // One runner at a time for a stalled queue, however long the dispatcher takes to start it.
            if (it.stallRunnerPending.compareAndSet(false, true)) {
                it.join()
                childScope!!.launch {
                    it.stallRunnerPending.set(false)
                    work(scope, it, loop = false)
                }
            }
        }
    }
    if (childScope == null) {
        val children = CoroutineScope(scope.coroutineContext + childContext)
        childScope = children
        plainChildren = plainContext(children)
    }
    driveRight.queue.offer(execution)
}

internal fun Engine.launchRunner(scope: CoroutineScope, driveRight: DriveRight) {
    childScope!!.launch {
        work(scope, driveRight, loop = false)
    }
}

/**
 * Starts queued executions in the calling coroutine's thread until the queue is empty, counted as a worker
 * (the caller counted itself already). The run's [loop] starts only nodes known to be quick: its thread is the
 * caller's, which a long node must not hold (a UI thread, say); it hands the others to their own coroutine.
 *
 * In virtual time every node counts as long, whatever its start cost: which coroutine starts a node, and so the
 * order of same-instant completions, must not depend on how busy the host is. No worker is then ever counted
 * while inside a node, so queued work always has a worker polling it or a runner on its way, and the
 * [StallMonitor] is never needed.
 */
internal suspend fun Engine.work(scope: CoroutineScope, driveRight: DriveRight, loop: Boolean) {
    val costs = if (virtualTime) null else startCosts
    // The clock reading that ended the last start in this loop, or NO_READING: a start right after another one begins
    // at that reading (one reading per start, not two; `docs/semantics.md` §8).
    var reading = NO_READING
    while (true) {
        val execution = if (currentCoroutineContext().isActive) driveRight.queue.poll() else null
        if (execution == null) {
            if (driveRight.leave()) launchRunner(scope, driveRight)
            return
        }
        driveRight.countPoll()
        val long = costs == null || costs.get(execution.index) > QUICK_START_NANOS
        if (long && loop) {
            childScope!!.launch { startTimed(scope, driveRight, execution, NO_READING) }
            reading = NO_READING
            continue
        }
        if (long) {
            if (driveRight.leave()) launchRunner(scope, driveRight)
            reading = NO_READING
        } else if (!driveRight.queue.isEmpty()) {
            StallMonitor.watch(driveRight)
        }
        reading = startTimed(scope, driveRight, execution, reading)
        if (long) {
            driveRight.join()
            reading = NO_READING
        }
    }
}

/**
 * [startNode], keeping how long it kept this thread busy in [StartCosts] (a moving average, see below); in virtual time
 * the start is neither measured nor recorded (the wall clock has no say there, see [work]). Starts at [reading] when
 * the worker has one from the start it made just before (else reads the clock); returns the reading that ended it, or
 * NO_READING in virtual time.
 */
private fun Engine.startTimed(
    scope: CoroutineScope,
    driveRight: DriveRight,
    execution: Execution,
    reading: Long,
): Long {
    if (virtualTime) {
        startNode(scope, driveRight, execution)
        return NO_READING
    }
    val costs = startCosts
    val index = execution.index
    val started = if (reading != NO_READING) reading else System.nanoTime()
    // The execution starts at this reading too (the node's coroutine starts now, undispatched: [runNode]).
    execution.durationNanos = started
    startNode(scope, driveRight, execution)
    val ended = System.nanoTime()
    val cost = ended - started
    val previous = costs.get(index)
    val average = if (previous == Long.MAX_VALUE) cost else (previous * 3 + cost) / 4
    // One slow start of a node that was quick does not make it long: a thread preempted, a GC pause, would send it to
    // a coroutine of its own, a wake-up of another thread per run, for the many runs the average takes to decay. It is
    // long from its second slow start in a row; meanwhile the StallMonitor covers a node that really took long.
    val firstSlow = previous < QUICK_START_NANOS && average > QUICK_START_NANOS
    costs.lazySet(index, if (firstSlow) QUICK_START_NANOS else average)
    return ended
}
