package dev.trellis.javaapi.internal

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CompletableJob
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlin.coroutines.CoroutineContext

/**
 * Streams the custom events of one attempt of a Java node (or agent call) from plain, non-suspending Java code, to
 * [sink] (the node's suspending `emit`).
 *
 * Two ways to wait for a slow subscriber:
 * - **Deferred**, asked for on the thread running an action that runs on the run's own threads (a `node`, an async
 *   action, an agent's `call`) while it runs: blocking there could hold every thread of the coroutine pool, the subscriber's
 *   included (a deadlock on a small machine). The event is sent at once when the subscriber keeps up; otherwise it
 *   waits in memory, in order, and [finish] (called before the attempt ends) waits until all are delivered, so they
 *   still come before the node's completion and a slow subscriber still holds the run back, node by node.
 * - **Blocking** everywhere else (a `blockingNode`'s thread, the application's own threads): the call blocks until
 *   the subscriber takes the event, after the deferred ones. Cancelling the node cancels the wait.
 *
 * [context] is the node coroutine's context: its job (cancelling the node cancels every wait) and its dispatcher
 * (where deferred sends resume).
 */
internal class Emitter(
    private val context: CoroutineContext,
    private val sink: suspend (Any) -> Unit,
) {
    private val lock = Any()
    private val queue = ArrayDeque<Any>(0)

    /** Set while a coroutine sends deferred events; completed when the queue is empty again. */
    private var sending: CompletableDeferred<Unit>? = null
    private var failure: Throwable? = null
    private var senders: CompletableJob? = null

    /** Streams [payload], [deferred] or blocking (see [Emitter]). */
    fun emit(payload: Any, deferred: Boolean) {
        if (deferred) emitDeferred(payload) else emitBlocking(payload)
    }

    private fun emitBlocking(payload: Any) {
        // A supervisor child of the node's job: cancelling the node cancels the wait, but a failure of the wait
        // does not cancel the node (it is thrown to the caller instead).
        val guard = SupervisorJob(context[Job])
        try {
            runBlocking(guard) {
                awaitDeferred()
                sink(payload)
            }
        } finally {
            guard.complete()
        }
    }

    private fun emitDeferred(payload: Any) {
        val done = synchronized(lock) {
            failure?.let { throw it }
            if (sending != null) {
                queue.addLast(payload)
                return
            }
            CompletableDeferred<Unit>().also { sending = it }
        }
        val scope = CoroutineScope(context + senderJob())
        // Undispatched: when the subscriber keeps up, the event is sent right here, before this call returns.
        scope.launch(start = CoroutineStart.UNDISPATCHED) { sendAll(payload, done) }
    }

    private fun senderJob(): CompletableJob = synchronized(lock) {
        senders ?: SupervisorJob(context[Job]).also { senders = it }
    }

    private suspend fun sendAll(first: Any, done: CompletableDeferred<Unit>) {
        try {
            var next: Any? = first
            while (next != null) {
                sink(next)
                next = synchronized(lock) {
                    queue.removeFirstOrNull() ?: null.also { sending = null }
                }
            }
        } catch (e: Throwable) {
            // kept for the next emit and for finish(); the node's own cancellation included
            synchronized(lock) {
                if (failure == null) failure = e
                queue.clear()
                sending = null
            }
            if (e is CancellationException) throw e
        } finally {
            done.complete(Unit)
        }
    }

    /** Waits until every deferred event was sent. */
    private suspend fun awaitDeferred() {
        while (true) {
            val current = synchronized(lock) { sending } ?: return
            current.await()
        }
    }

    /**
     * Ends the attempt, in the node's coroutine: waits until every deferred event was delivered, then throws
     * [failure] (the action's own exception, as it is) or, without one, the first failure of a deferred send (the
     * subscriber went away, the node was cancelled). A cancellation of the wait is always rethrown.
     */
    suspend fun finish(failure: Throwable?) {
        try {
            try {
                awaitDeferred()
            } finally {
                synchronized(lock) { senders }?.complete()
            }
        } catch (e: Throwable) {
            if (failure == null || e is CancellationException) throw e
        }
        if (failure != null) throw failure
        synchronized(lock) { this.failure }?.let { throw it }
    }
}
