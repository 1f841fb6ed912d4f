package dev.trellis.runtime.internal.scheduling

import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.composition.childKey
import dev.trellis.runtime.internal.events.completedAt
import dev.trellis.runtime.internal.events.driverHead
import dev.trellis.runtime.internal.events.startedAt
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.persistence.checkpointStep
import dev.trellis.runtime.internal.persistence.stopResumable
import dev.trellis.runtime.internal.policies.addCompensable
import dev.trellis.runtime.internal.policies.chargeRun
import dev.trellis.runtime.internal.policies.routeFailure
import dev.trellis.runtime.internal.policies.takeChildCompensable
import dev.trellis.runtime.internal.policies.wallTimeExceeded
import dev.trellis.runtime.internal.rethrowIfFatal
import java.time.Instant

/*
 * What the driver of an [Engine] does when an execution begins ([begin]) and when it ends ([complete]): [merge] its
 * writes, decide its edges and trigger their targets, post its events, record its outcome, and fail the run
 * ([fail]) when it failed. Only the holder of the drive right calls these (see [DriveRight]).
 */

internal fun Engine.begin(index: Int): Execution {
    val number = position.begin(index)
    val execution = Execution(this, index, number, currentState)
    position.running[index] = execution
    recorder.begun(execution, position.running)
    outbox.post { seq -> RunEvent.NodeStarted(driverHead(execution, seq, startedAt())) }
    return execution
}

internal fun Engine.complete(execution: Execution) {
    val index = execution.index
    position.finish(index)
    recorder.measure(execution)
    // Budgets (`policies/Meters.kt`): the execution's charges reach the totals at its end; a crossing stops the run
    // after the execution's own end is processed (its writes merged, its edges decided).
    // An interrupted subgraph or map node counts nothing now: its child runs and finished tasks keep their charges in
    // their checkpoints, counted when it runs again and ends.
    val charges =
        if (execution.status == Status.INTERRUPTED && execution.node.composite != null) null else execution.charges
    var crossing = charges?.let { chargeRun(execution, it) }
    if (wallLimitNanos >= 0 && crossing == null && !position.failed) {
        crossing = wallTimeExceeded(execution.node.id, false)
    }
    if (execution.childCompensable != null) takeChildCompensable(execution)
    when (execution.status) {
        Status.COMPLETED -> completed(execution)
        Status.FAILED -> failed(execution)
        Status.INTERRUPTED -> interrupted(execution)
        else -> cancelled(execution)
    }
    if (crossing != null && !position.failed) fail(crossing)
    if (checkpointer != null) recorder.nodeStatus[index] = execution.status
    checkpointer?.recordNode(index)
    if (execution.status != Status.INTERRUPTED && execution.node.composite != null) {
        checkpointer?.dropChildren(childKey(execution))
    }
    execution.release()
    // A halted run starts nothing: tokens stay tokens (an interrupted node about to re-run must not take one).
    if (!position.halted) position.promote()
}

/**
 * [complete], then a checkpoint when every step is saved — unless the run is being cancelled: a cancelled run saves
 * nothing after its cancellation point (`docs/semantics.md` §6), so that its executions in flight run again on resume.
 */
internal suspend fun Engine.completeStep(execution: Execution) {
    complete(execution)
    if (checkpointer?.everyStep == true && !position.failed && !position.cancelSeen) checkpointStep()
}

/**
 * An execution ended cancelled. Outside a failed run (whose fail-fast cancellation is its own), only the run's
 * cancellation ends one so, possibly seen here before the driver's own coroutine sees it: the run starts nothing and
 * saves nothing more. A checkpoint saved now would record the execution as ended and its triggers as spent, and a
 * resume would skip it for good.
 */
private fun Engine.cancelled(execution: Execution) {
    if (!position.failed) {
        position.cancelSeen = true
        position.halted = true
    }
    outbox.post { seq -> RunEvent.NodeCancelled(driverHead(execution, seq, now())) }
}

/** A node asked for input: the run stops starting nodes and ends INTERRUPTED once running ones finish. */
private fun Engine.interrupted(execution: Execution) {
    recorder.interrupts += execution
    position.halted = true
    outbox.post {
        seq ->
        RunEvent.NodeCancelled(driverHead(execution, seq, now()))
    }
}

private fun Engine.completed(execution: Execution) {
    val refused = mergeWrites(execution)
    if (refused != null) {
        execution.status = Status.FAILED
        execution.error = refused
        failed(execution)
        return
    }
    if (position.failed) {
        if (execution.node.compensation != null) addCompensable(execution)
        sendCompleted(execution)
        return
    }
    val edges = edges
    val count = try {
        edges.decide(topology, execution, currentState)
    } catch (e: Throwable) {
        e.rethrowIfFatal(null)
        execution.status = Status.FAILED
        execution.error = e
        failed(execution)
        return
    }
    if (execution.node.compensation != null) addCompensable(execution)
    val at = sendCompleted(execution)
    val channels = topology.channels
    for (i in 0 until count) {
        val target = edges.taken[i]
        if (at != null) {
            val to = if (target < 0) Graph.END else pathOf(target)
            outbox.post { seq -> RunEvent.EdgeTaken(runId, seq, at, execution.path, to) }
        }
        // One token per target, however many of this execution's edges lead there.
        if (target >= 0 && !edges.takenBefore(target, i)) position.trigger(target, channels.of(execution.index, target))
    }
}

/**
 * Posts [execution]'s `NodeCompleted` and returns its timestamp, which the execution's `EdgeTaken` events share (one
 * clock reading per completion); null when nobody collects events.
 */
private fun Engine.sendCompleted(execution: Execution): Instant? {
    if (!outbox.enabled) return null
    val at = completedAt()
    outbox.post { seq ->
        RunEvent.NodeCompleted(driverHead(execution, seq, at), execution.attempt, execution.durationNanos)
    }
    return at
}

private fun Engine.failed(execution: Execution) {
    val error = execution.error!!
    if (error is CheckpointStoreUnavailableException) {
        // The store stayed unreachable under a child run or a map task: the run stops resumable, and the node will
        // run again on resume (`RunCheckpoints.kt`); not a failure of the node.
        execution.status = Status.CANCELLED
        stopResumable(error)
        cancelled(execution)
        return
    }
    if (routeFailure(execution, error)) return
    postFailed(execution, error, routedTo = null)
    fail(error)
}

/** Posts [execution]'s `NodeFailed` event; [routedTo] names the error route's handler when the failure was routed. */
internal fun Engine.postFailed(execution: Execution, error: Throwable, routedTo: String?) {
    outbox.post { seq ->
        RunEvent.NodeFailed(
            driverHead(execution, seq, now()),
            execution.attempt,
            error,
            execution.durationNanos,
            routedTo,
        )
    }
}

/** Marks the run failed: nothing starts any more; with fail-fast, running nodes are cancelled. */
internal fun Engine.fail(error: Throwable) {
    recorder.errors += error
    if (position.failed) return
    position.failed = true
    position.halted = true
    if (config.failFast) cancelRunning()
}

/**
 * Cancels the executions still running. One whose body already finished is left alone: its completion is on its
 * way, and its coroutine may be the one driving the scheduler right now.
 */
internal fun Engine.cancelRunning() {
    for (execution in position.running) {
        if (execution != null && execution.status == Status.EXECUTING) execution.cancel()
    }
}

/**
 * Applies the execution's writes atomically ([merge]) and records them (versions, last writers, the checkpoint's
 * delta); returns why they cannot be applied — a conflict, or the failure of a reducer — instead of applying any.
 */
private fun Engine.mergeWrites(execution: Execution): Throwable? {
    val count = execution.writeCount
    if (count == 0) return null
    val merged =
        merge(graph.schema, currentState, execution, topology.keys, position.lastWriter, position.version, readBack)
    if (merged !is State) return merged as Throwable
    val everyStep = checkpointer?.everyStep == true
    for (i in 0 until count) {
        val k = execution.writeKeyAt(i)
        position.lastWriter[k] = execution.node.id
        if (everyStep) checkpointer.recordWrite(k, execution.writeValueAt(i))
    }
    position.version += count
    currentState = merged
    return null
}
