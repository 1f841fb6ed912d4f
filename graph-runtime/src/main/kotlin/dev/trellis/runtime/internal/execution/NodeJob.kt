// ChildJob and ChildHandle are kotlinx.coroutines internal API, deprecated at error level to deter use; a Job must name them.
@file:Suppress("DEPRECATION", "DEPRECATION_ERROR")

package dev.trellis.runtime.internal.execution

import kotlinx.coroutines.AbstractCoroutine
import kotlinx.coroutines.ChildHandle
import kotlinx.coroutines.ChildJob
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.InternalForInheritanceCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.handleCoroutineException
import kotlinx.coroutines.selects.SelectClause0
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.cancellation.CancellationException

/**
 * The job of an execution a worker starts in a plain context ([startNode]), and the completion of its body: a node's
 * coroutine without the coroutine, until the body needs one.
 *
 * A branch of a fan-out that finishes without suspending is most of a fan-out's work; as a coroutine of its own it paid
 * for a job attached to the loop's scope (a handle in the scope's list of children, removed again at its end) and the
 * job's completion. This job is attached to nothing while nobody asks more of it than whether it is active: a body
 * that never suspends, never launches a child and never waits on its job finishes with one compare-and-set. The first
 * call that needs a real job — a suspension registering its cancellation handler, a child coroutine attaching itself,
 * a completion handler, a `join` — makes one ([BodyJob], a child of the loop's scope, like the coroutine was) and
 * forwards this and every later call to it; it then completes when the body does, after the children the body left
 * behind, as the coroutine would.
 *
 * What the body sees does not change: until the real job exists, this job is active while the loop's scope is and it
 * was not cancelled ([isActive]) — so a body that polls `isActive` sees its run's cancellation and a fail-fast
 * cancellation ([cancel]) alike; a cancellation that came first is carried over to the real job when it is made. A
 * failure other than a cancellation fails the loop's scope, as a failed child coroutine would: through a real job made
 * for it and completed with that failure ([finish]).
 *
 * kotlinx.coroutines deters implementations of [Job] outside itself (its inheritance is opt-in); its own code handles
 * a foreign job through the public calls forwarded here (`CancellableContinuationImpl` registers with
 * `invokeOnCompletion`, `JobSupport.initParentJob` calls `attachChild`). The tests of workers and cancellation would
 * show an upgrade that stops doing so.
 */
@OptIn(InternalForInheritanceCoroutinesApi::class, InternalCoroutinesApi::class, ExperimentalCoroutinesApi::class)
internal class NodeJob(
    /** The loop scope's context without its job. */
    base: CoroutineContext,
    /** The loop scope's context: the real job's parent context. */
    private val scopeContext: CoroutineContext,
    /** The job of the loop's scope: the real job's parent. */
    private val scopeJob: Job,
) : Job, Continuation<Unit> {
    /** The body's context: the loop scope's, with this job instead of the scope's. */
    override val context: CoroutineContext = NodeContext(base, this)

    /**
     * null while active without a real job; [FINISHED]; a [Cancelled]; or the real job ([BodyJob]). Written by
     * compare-and-set only ([STATE], which needs the field visible to it).
     */
    @Volatile
    @JvmField
    var state: Any? = null

    override val key: CoroutineContext.Key<*> get() = Job

    override val parent: Job get() = scopeJob

    override val isActive: Boolean
        get() = when (val s = state) {
            null -> scopeJob.isActive
            is BodyJob -> s.isActive
            else -> false
        }

    override val isCompleted: Boolean
        get() = when (val s = state) {
            null -> false
            is BodyJob -> s.isCompleted
            is Cancelled -> s.finished
            else -> true // FINISHED
        }

    override val isCancelled: Boolean
        get() = when (val s = state) {
            null -> scopeJob.isCancelled
            is BodyJob -> s.isCancelled
            else -> s is Cancelled
        }

    override fun getCancellationException(): CancellationException = real().getCancellationException()

    override fun start(): Boolean = false // active from the start

    override fun cancel(cause: CancellationException?) {
        while (true) {
            when (val s = state) {
                null -> if (STATE.compareAndSet(this, null, Cancelled(cause, finished = false))) return
                is BodyJob -> return s.cancel(cause)
                else -> return // finished or cancelled already
            }
        }
    }

    @Deprecated(level = DeprecationLevel.HIDDEN, message = "Binary compatibility of Job, as JobSupport keeps it")
    override fun cancel(cause: Throwable?): Boolean {
        cancel(cause as? CancellationException ?: CancellationException(cause?.message, cause))
        return true
    }

    override val children: Sequence<Job> get() = (state as? BodyJob)?.children ?: emptySequence()

    override fun attachChild(child: ChildJob): ChildHandle = real().attachChild(child)

    override suspend fun join() {
        if (!isCompleted) real().join()
    }

    override val onJoin: SelectClause0 get() = real().onJoin

    override fun invokeOnCompletion(handler: (cause: Throwable?) -> Unit): DisposableHandle =
        real().invokeOnCompletion(handler)

    override fun invokeOnCompletion(
        onCancelling: Boolean,
        invokeImmediately: Boolean,
        handler: (cause: Throwable?) -> Unit,
    ): DisposableHandle = real().invokeOnCompletion(onCancelling, invokeImmediately, handler)

    /** The body suspended and has now ended: as [finish]. */
    override fun resumeWith(result: Result<Unit>) {
        finish(result.exceptionOrNull())
    }

    /**
     * The body ended, normally or with [failure]: completes the real job if there is one (after its children), else
     * marks this job finished — or, for a failure that is not a cancellation, makes the real job to fail the loop's
     * scope with it.
     */
    fun finish(failure: Throwable?) {
        while (true) {
            val s = state
            if (s is BodyJob) {
                s.resumeWith(if (failure == null) Result.success(Unit) else Result.failure(failure))
                return
            }
            if (failure != null && failure !is CancellationException) {
                real()
                continue
            }
            val next = when {
                s is Cancelled -> Cancelled(s.cause, finished = true)
                failure != null -> Cancelled(failure as CancellationException, finished = true)
                else -> FINISHED
            }
            if (STATE.compareAndSet(this, s, next)) return
        }
    }

    /** The real job, made on first need: a child of the loop's scope, in this job's state (cancelled, finished). */
    private fun real(): BodyJob {
        while (true) {
            val s = state
            if (s is BodyJob) return s
            val job = BodyJob(scopeContext)
            if (s is Cancelled) job.cancel(s.cause)
            if (s === FINISHED || (s is Cancelled && s.finished)) job.resumeWith(Result.success(Unit))
            if (STATE.compareAndSet(this, s, job)) return job
            // Lost a race with a cancellation or the body's end: drop this one, read the state again.
            job.cancel()
            job.resumeWith(Result.success(Unit))
        }
    }

    override fun toString(): String = "NodeJob[${state ?: "Active"}]"

    /** Cancelled before a real job was made: with the cause given, and whether the body has ended since. */
    class Cancelled(val cause: CancellationException?, val finished: Boolean) {
        override fun toString(): String = if (finished) "Cancelled" else "Cancelling"
    }
}

/**
 * The real job of a [NodeJob]: a coroutine's job without a coroutine's body — a child of the loop's scope, cancelling
 * (not completed) from its cancellation until the body ends ([NodeJob.finish] completes it), failing its parent with a
 * failure, as the node's coroutine was. (A `Job()` would complete as soon as it is cancelled, before its body ended.)
 */
@OptIn(InternalCoroutinesApi::class)
private class BodyJob(scopeContext: CoroutineContext) : AbstractCoroutine<Unit>(scopeContext, true, true) {
    override fun handleJobException(exception: Throwable): Boolean {
        handleCoroutineException(context, exception)
        return true
    }
}

/**
 * A [NodeJob]'s context: [base] (the loop scope's context without its job) and the job, as one object made without
 * folding one context into the other (`base + job` folds and allocates per start). Keeps the contract of a context:
 * [get] finds the job by its key, [fold] visits every element once, [minusKey] and `plus` return contexts of the same
 * elements.
 */
private class NodeContext(private val base: CoroutineContext, private val job: NodeJob) : CoroutineContext {
    @Suppress("UNCHECKED_CAST")
    override fun <E : CoroutineContext.Element> get(key: CoroutineContext.Key<E>): E? =
        if (key === Job) job as E else base[key]

    override fun <R> fold(initial: R, operation: (R, CoroutineContext.Element) -> R): R =
        operation(base.fold(initial, operation), job)

    override fun minusKey(key: CoroutineContext.Key<*>): CoroutineContext {
        if (key === Job) return base
        val rest = base.minusKey(key)
        return if (rest === base) this else rest + job
    }

    override fun toString(): String =
        fold("[") { text, element -> if (text == "[") "[$element" else "$text, $element" } + "]"
}

/** [NodeJob]'s state when its body ended normally without ever needing a real job. */
private val FINISHED = object {
    override fun toString(): String = "Completed"
}

private val STATE: AtomicReferenceFieldUpdater<NodeJob, Any> =
    AtomicReferenceFieldUpdater.newUpdater(NodeJob::class.java, Any::class.java, "state")
