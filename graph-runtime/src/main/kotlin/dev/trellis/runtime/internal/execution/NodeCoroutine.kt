package dev.trellis.runtime.internal.execution

import dev.trellis.runtime.Status
import dev.trellis.runtime.internal.scheduling.DriveRight
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.driveFromNode
import kotlinx.coroutines.AbstractCoroutine
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.ThreadContextElement
import kotlinx.coroutines.handleCoroutineException
import kotlinx.coroutines.newCoroutineContext
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED

/**
 * The coroutine of one execution started by a worker ([startNode]): what `childScope.launch(start = UNDISPATCHED)`
 * makes — a child of the run's loop scope on the node dispatcher, failing its parent when it fails, reporting like a
 * launched coroutine ([handleJobException]) — with what its body needs in fields. Its body is one shared function
 * reference ([RUN_NODE]), so a start allocates no capturing lambda and no copy of one (a suspend lambda started
 * with a receiver is copied), only this coroutine, its context and its body's frame.
 *
 * Built on kotlinx.coroutines' `AbstractCoroutine`, as its own builders are; it is marked internal API, so an upgrade
 * of kotlinx.coroutines may need this class adapted (the tests of workers and cancellation would show it).
 */
@OptIn(InternalCoroutinesApi::class)
internal class NodeCoroutine(
    parentContext: CoroutineContext,
    @JvmField val engine: Engine,
    @JvmField val scope: CoroutineScope,
    @JvmField val driveRight: DriveRight,
    @JvmField val execution: Execution,
) : AbstractCoroutine<Unit>(parentContext, true, true) {
    override fun handleJobException(exception: Throwable): Boolean {
        handleCoroutineException(context, exception)
        return true
    }
}

/**
 * What a node's coroutine runs: the execution, unless a fail-fast cancellation or the run's cancellation came first;
 * then it hands the execution over, and drives the scheduler if nobody else does (`scheduling/Drive.kt`).
 */
private suspend fun NodeCoroutine.runNode() {
    val execution = execution
    val driveRight = driveRight
    // What a `finally` would do, written out: a `finally` block is compiled twice (the normal and the exceptional
    // exit), and with it the inlined drive, which would put this function over HotSpot's 8,000 bytes of bytecode for
    // a method it compiles (it would run interpreted: a fan-out four times slower).
    val failure = try {
        // Not started when a fail-fast cancellation came first, or when the run was cancelled meanwhile.
        if (isActive && execution.claim(this)) {
            // Outside virtual time its worker read the clock right before starting this coroutine ([startTimed]).
            if (engine.virtualTime) execution.durationNanos = engine.nanoTime()
            execution.run()
        } else {
            execution.status = Status.CANCELLED
            execution.durationNanos = 0
        }
        null
    } catch (e: Throwable) {
        e
    }
    if (driveRight.offer(execution)) engine.driveFromNode(scope, driveRight)
    if (failure != null) throw failure
}

/** [runNode] as a value, made once: calling a reference to a function allocates no lambda's copy. */
private val RUN_NODE: suspend NodeCoroutine.() -> Unit = NodeCoroutine::runNode

/**
 * Whether node coroutines of [childScope] may start without installing thread-context elements: true when
 * [childScope]'s context holds no `ThreadContextElement` and a `launch` would add nothing to it (no copyable
 * element to copy, no debug-mode coroutine id). Then the worker's thread already runs with what the node's context
 * would install (the worker's coroutine is a child of the same scope, or the loop itself), so [startNode] can skip
 * saving and restoring it around the start. Read once per run.
 */
@OptIn(ExperimentalCoroutinesApi::class)
internal fun plainContext(childScope: CoroutineScope): Boolean {
    val context = childScope.coroutineContext
    return childScope.newCoroutineContext(EmptyCoroutineContext) === context &&
        context.fold(true) { plain, element -> plain && element !is ThreadContextElement<*> }
}

/**
 * Starts [execution] in a coroutine of its own ([NodeCoroutine]), undispatched: it runs in this thread until it
 * finishes or first suspends, then resumes on the node dispatcher. A plain context ([plainContext]) is not
 * installed around the start (nothing to install); otherwise the start is kotlinx.coroutines' own, with the context
 * a `launch` would make.
 */
@OptIn(ExperimentalCoroutinesApi::class)
internal fun Engine.startNode(scope: CoroutineScope, driveRight: DriveRight, execution: Execution) {
    val children = childScope!!
    if (!plainChildren) {
        val coroutine = NodeCoroutine(
            children.newCoroutineContext(EmptyCoroutineContext),
            this,
            scope,
            driveRight,
            execution,
        )
        coroutine.start(CoroutineStart.UNDISPATCHED, coroutine, RUN_NODE)
        return
    }
    val coroutine = NodeCoroutine(children.coroutineContext, this, scope, driveRight, execution)
    // What an undispatched start does (kotlinx.coroutines' startCoroutineUndispatched), without the context switch.
    // The reference is called directly, not through startCoroutineUninterceptedOrReturn, which wraps the completion
    // of anything but a lambda (an object per start) so that a function suspending without a frame of its own still
    // resumes through the dispatcher: runNode has its frame, and resumes through it.
    val value = try {
        @Suppress("UNCHECKED_CAST")
        (RUN_NODE as (NodeCoroutine, Continuation<Unit>) -> Any?)(coroutine, coroutine)
    } catch (e: Throwable) {
        coroutine.resumeWith(Result.failure(e))
        return
    }
    if (value !== COROUTINE_SUSPENDED) coroutine.resumeWith(Result.success(Unit))
}
