package dev.trellis.temporal.internal

import io.temporal.workflow.CancellationScope
import io.temporal.workflow.Promise
import io.temporal.workflow.Workflow
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Delay
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.InternalCoroutinesApi
import java.time.Duration
import kotlin.coroutines.CoroutineContext

/**
 * The coroutine dispatcher of a run inside workflow code: continuations are queued and run on the workflow thread
 * by [drain], in order, so the scheduler is as deterministic as Temporal requires. Delays and timeouts
 * (`delay`, `withTimeout`) are durable Temporal timers, never a thread of kotlinx.coroutines' default executor.
 */
@OptIn(InternalCoroutinesApi::class)
internal class WorkflowDispatcher : CoroutineDispatcher(), Delay {
    private val queue = ArrayDeque<Runnable>()

    override fun dispatch(context: CoroutineContext, block: Runnable) {
        queue.addLast(block)
    }

    /** Whether a continuation is waiting to run. */
    fun hasWork(): Boolean = queue.isNotEmpty()

    /** Runs queued continuations (and those they queue) until none is left. */
    fun drain() {
        while (true) {
            val next = queue.removeFirstOrNull() ?: return
            next.run()
        }
    }

    override fun scheduleResumeAfterDelay(timeMillis: Long, continuation: CancellableContinuation<Unit>) {
        val handle = timer(timeMillis) { continuation.resume(Unit) { _, _, _ -> } }
        continuation.invokeOnCancellation { handle.dispose() }
    }

    override fun invokeOnTimeout(timeMillis: Long, block: Runnable, context: CoroutineContext): DisposableHandle =
        timer(timeMillis) { block.run() }

    private fun timer(timeMillis: Long, action: () -> Unit): DisposableHandle {
        var promise: Promise<Void>? = null
        val scope: CancellationScope = Workflow.newCancellationScope(
            Runnable { promise = Workflow.newTimer(Duration.ofMillis(timeMillis.coerceAtLeast(1))) },
        )
        scope.run()
        promise!!.handle { _, error ->
            if (error == null) queue.addLast(Runnable(action))
            null
        }
        return DisposableHandle { scope.cancel() }
    }
}
