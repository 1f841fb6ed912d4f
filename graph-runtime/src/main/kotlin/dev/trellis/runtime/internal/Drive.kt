package dev.trellis.runtime.internal

import dev.trellis.runtime.LimitExceededException
import dev.trellis.runtime.Status
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlin.coroutines.EmptyCoroutineContext

/*
 * The drive loop of an [Engine]: the run's [loop] drives the scheduler until it has nothing to do but wait, then
 * lets the drive right go ([Handoff]) and waits to be woken; node coroutines that finish while nobody drives run
 * [drive] themselves ([driveFromNode]). Starting ready nodes is [startReady]; the workers that start queued ones
 * are in `Workers.kt`, what happens when an execution begins or ends in `Steps.kt`.
 */

/** Runs the scheduler in the run's own coroutine until nothing runs and nothing can start. */
internal suspend fun Engine.loop() = coroutineScope {
    val keepAlive = checkpointer?.takeIf { !it.nested }?.let { writer ->
        launch(if (virtualTime) EmptyCoroutineContext else LeaseRenewal.dispatcher) {
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
        handoff?.closed = true
    }
}

// Inline, like [startReady]: a suspend function's frame is allocated per call, and these run once per run or per drive.
private suspend inline fun Engine.steps(scope: CoroutineScope) {
    while (!drive(scope)) {
        val handoff = handoff!!
        work(scope, handoff, loop = true)
        handoff.wake.receive()
        handoff.join()
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
    val inbox = handoff?.inbox
    if (inbox != null) while (true) complete(inbox.poll() ?: break)
    for (execution in position.running) {
        if (execution == null) continue
        if (execution.status == Status.EXECUTING) execution.status = Status.CANCELLED
        complete(execution)
    }
}

/**
 * Inline, as [driveFromNode]: a node coroutine that completes and drives takes no suspend frames beyond its own.
 *
 * Runs the scheduler while the caller holds the drive right (see [Handoff]): completes finished executions,
 * starts ready nodes. Returns true when nothing runs and nothing can start (the caller keeps the right), false
 * when it let the right go because it had nothing to do until a running node finishes.
 */
internal suspend inline fun Engine.drive(scope: CoroutineScope): Boolean {
    var missed = 1
    while (true) {
        startReady(scope)
        // One completion at a time, each followed by starting what it made ready: a successor never waits for the
        // checkpoints of other nodes' completions.
        val finished = handoff?.inbox?.poll()
        if (finished != null) {
            completeStep(finished)
            continue
        }
        if (position.runningCount == 0) {
            if (!position.halted && position.fallback()) continue
            return true
        }
        outbox.flush()
        missed = handoff!!.release(missed)
        if (missed == 0) return false
    }
}

/**
 * A node's coroutine took the drive right: it runs the scheduler itself (no wake-up of the loop), and passes
 * the right to the loop when the run has nothing left to do or when it was cancelled itself (a fail-fast
 * cancellation: it must not suspend any more).
 */
internal suspend inline fun Engine.driveFromNode(scope: CoroutineScope, handoff: Handoff) {
    val done = try {
        !currentCoroutineContext().isActive || drive(scope)
    } catch (e: Throwable) {
        // Never lose the drive right: the loop takes over (or, when the run is cancelled, reports what is left).
        handoff.passToLoop()
        throw e
    }
    if (done) handoff.passToLoop()
}

internal suspend inline fun Engine.startReady(scope: CoroutineScope) {
    // Counted in a field of the driver's, not a local captured by a lambda: in a node's coroutine, where this is
    // inlined into a suspend lambda, such a local is a boxed `Ref` per call.
    queuedByDriver = 0
    try {
        startEach(scope)
    } finally {
        if (queuedByDriver > 0) {
            val handoff = handoff!!
            if (handoff.needsRunner()) {
                launchRunner(scope, handoff)
            } else if (!virtualTime) {
                // A counted worker may be inside a node believed quick that is not quick this time (never in
                // virtual time, where every node counts as long: see work()).
                StallMonitor.watch(handoff)
            }
        }
    }
}

internal suspend inline fun Engine.startEach(scope: CoroutineScope) {
    while (!position.halted && position.readyCount > 0 && position.runningCount < config.maxConcurrency) {
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
        outbox.flush()
        if (position.runningCount == 1 && position.readyCount == 0) {
            execution.run()
            if (checkpointer == null) complete(execution) else completeStep(execution)
        } else {
            enqueue(scope, execution)
            queuedByDriver++
        }
    }
}
