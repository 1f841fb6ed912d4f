package dev.trellis.runtime.internal.scheduling

import dev.trellis.runtime.LimitExceededException
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.execution.StallMonitor
import dev.trellis.runtime.internal.execution.enqueue
import dev.trellis.runtime.internal.execution.launchRunner
import dev.trellis.runtime.internal.execution.work
import dev.trellis.runtime.internal.policies.wallTimeExceeded
import dev.trellis.runtime.internal.rethrowIfFatal
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch

/*
 * The drive loop of an [Engine]: the run's [loop] drives the scheduler until it has nothing to do but wait, then
 * lets the drive right go ([DriveRight]) and waits to be woken; node coroutines that finish while nobody drives run
 * [drive] themselves ([driveFromNode]). Starting ready nodes is [startReady]; the workers that start queued ones
 * are in `execution/Workers.kt`, what happens when an execution begins or ends in `Steps.kt`.
 */

/**
 * Runs the scheduler in the run's own coroutine until nothing runs and nothing can start: in the caller's coroutine
 * while each node starts alone ([driveAlone]), in a scope of the run's own once two could run at once.
 *
 * Not inline, although its frame is one per run: with the drive loop inlined, `Engine.execute` would pass HotSpot's
 * limit of 8,000 bytes of bytecode for a method it compiles, and run interpreted (every workload ten times slower).
 */
internal suspend fun Engine.loop() {
    // A run in virtual time that renews its lease needs its scope from the start, for the renewal's coroutine.
    val renewsLease = virtualTime && checkpointer?.nested == false
    if (!renewsLease && driveAlone()) return
    loopInScope()
}

/**
 * Drives the run in the caller's coroutine, without a scope of its own, for as long as each node starts alone (one
 * ready, none running): the driver then runs it inline ([startEach]) and no node coroutine is launched, so the run
 * needs no scope to wait for them. Returns true when the run is done; false, with nothing running and the nodes
 * still ready, when two could run at once: the loop then goes on in its scope ([loopInScope]).
 */
@Suppress("NOTHING_TO_INLINE") // inline: no suspend frame of its own, once per run and per child run
private suspend inline fun Engine.driveAlone(): Boolean {
    if (!drive(null)) return false
    outbox.flush()
    return true
}

/** [loop] in a scope of the run's own, whose children are the run's node coroutines (and a lease renewal). */
private suspend fun Engine.loopInScope() = coroutineScope {
    // A run in real time has its lease renewed by LeaseRenewal from its claim to its release (no coroutine of its
    // own); one in virtual time renews it in its own context, on its scheduler's time.
    val keepAlive = checkpointer?.takeIf { !it.nested && virtualTime }?.let { writer ->
        launch {
            try {
                writer.keepLeaseAlive()
            } catch (e: Throwable) {
                e.rethrowIfFatal(currentCoroutineContext())
                // The next checkpoint fails with the store's own error and fails the run.
            }
        }
    }
    try {
        steps(this)
    } finally {
        keepAlive?.cancel()
        driveRight?.closed = true
    }
}

// Inline, like [startReady]: a suspend function's frame is allocated per call, and these run once per run or per drive.
private suspend inline fun Engine.steps(scope: CoroutineScope) {
    while (!drive(scope)) {
        val driveRight = driveRight!!
        work(scope, driveRight, loop = true)
        driveRight.wake.receive()
        driveRight.join()
    }
    outbox.flush()
}

/**
 * After the loop's scope ended abnormally (its children are done): reports the executions that were
 * still running, which all ended cancelled or finished just before.
 */
internal suspend fun Engine.drainCancelled() {
    position.failed = true
    position.halted = true
    val driveRight = driveRight
    if (driveRight != null) while (true) complete(driveRight.takeFinished() ?: break)
    for (execution in position.running) {
        if (execution == null) continue
        if (execution.status == Status.EXECUTING) execution.status = Status.CANCELLED
        complete(execution)
    }
}

/**
 * Inline, as [driveFromNode]: a node coroutine that completes and drives takes no suspend frames beyond its own.
 *
 * Runs the scheduler while the caller holds the drive right (see [DriveRight]): completes finished executions,
 * starts ready nodes. Returns true when nothing runs and nothing can start (the caller keeps the right), false
 * when it let the right go because it had nothing to do until a running node finishes.
 */
internal suspend inline fun Engine.drive(scope: CoroutineScope?): Boolean {
    var missed = 1
    while (true) {
        startReady(scope)
        // One completion at a time, each followed by starting what it made ready: a successor never waits for the
        // checkpoints of other nodes' completions.
        val finished = driveRight?.takeFinished()
        if (finished != null) {
            // completeStep is a suspend call: its frame is allocated per call, which a run without checkpoints skips.
            if (checkpointer == null) complete(finished) else completeStep(finished)
            continue
        }
        if (position.runningCount == 0) {
            // Without a scope ([driveAlone]), [startEach] leaves nodes ready that cannot start alone.
            if (scope == null && !position.halted && position.readyCount > 0) return false
            if (!position.halted && position.fallback()) continue
            return true
        }
        outbox.flush()
        missed = driveRight!!.release(missed)
        if (missed == 0) return false
    }
}

/**
 * A node's coroutine took the drive right: it runs the scheduler itself (no wake-up of the loop), and passes
 * the right to the loop when the run has nothing left to do or when it was cancelled itself (a fail-fast
 * cancellation: it must not suspend any more).
 */
internal suspend inline fun Engine.driveFromNode(scope: CoroutineScope, driveRight: DriveRight) {
    val done = try {
        !currentCoroutineContext().isActive || drive(scope)
    } catch (e: Throwable) {
        // Never lose the drive right: the loop takes over (or, when the run is cancelled, reports what is left).
        driveRight.passToLoop()
        throw e
    }
    if (done) driveRight.passToLoop()
}

internal suspend inline fun Engine.startReady(scope: CoroutineScope?) {
    // Counted in a field of the driver's, not a local captured by a lambda: in a node's coroutine, where this is
    // inlined into a suspend lambda, such a local is a boxed `Ref` per call.
    queuedByDriver = 0
    position.lastEnd = NO_READING
    try {
        startEach(scope)
    } finally {
        if (queuedByDriver > 0) {
            val driveRight = driveRight!!
            if (driveRight.needsRunner()) {
                launchRunner(scope!!, driveRight)
            } else if (!virtualTime) {
                // A counted worker may be inside a node believed quick that is not quick this time (never in
                // virtual time, where every node counts as long: see work()).
                StallMonitor.watch(driveRight)
            }
        }
    }
}

/**
 * Begins ready nodes while the run may start more; a node that starts alone (nothing else running or ready) runs
 * inline, the others are queued for the workers. Without a [scope] ([driveAlone]) it begins only a node that starts
 * alone, and leaves the ready nodes as they are when there are more.
 */
internal suspend inline fun Engine.startEach(scope: CoroutineScope?) {
    while (!position.halted && position.readyCount > 0 && position.runningCount < config.maxConcurrency) {
        if (scope == null && position.readyCount > 1) return
        if (drainWanted) {
            drained = true
            position.halted = true
            return
        }
        // A cancelled run starts nothing more, even when a node swallowed the cancellation.
        currentCoroutineContext().ensureActive()
        val index = position.pollReady()
        val over = if (position.totalExecutions >= maxExecutions) {
            LimitExceededException.executions(
                maxExecutions,
                maxExecutions < config.maxNodeExecutions,
                topology.nodes[index].id,
                position.totalExecutions + 1,
            )
        } else {
            wallTimeExceeded(topology.nodes[index].id, starting = true)
        }
        if (over != null) {
            fail(over)
            position.drop(index)
            return
        }
        val execution = begin(index)
        // Waiting for a slow event reader is not the node's time: it then reads the clock anew.
        if (outbox.full) position.lastEnd = NO_READING
        outbox.flush()
        if (position.runningCount == 1 && position.readyCount == 0) {
            // The start reading is kept in fields, not in a local: a local would be kept across the node's body in
            // the frame object of the suspend function this is inlined into (per run, per branch).
            if (position.lastEnd == NO_READING) position.lastEnd = nanoTime()
            execution.durationNanos = position.lastEnd
            execution.run()
            if (checkpointer == null) {
                complete(execution)
                position.lastEnd += execution.durationNanos
            } else {
                position.lastEnd = NO_READING // a checkpoint takes time of its own
                completeStep(execution)
            }
        } else {
            position.lastEnd = NO_READING
            enqueue(scope!!, execution)
            queuedByDriver++
        }
    }
}
