package dev.trellis.javaapi.internal

import dev.trellis.graph.NodeChain
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.NodeWrites
import dev.trellis.graph.State
import dev.trellis.javaapi.JavaNodeInterceptor
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.future.future
import kotlinx.coroutines.runInterruptible
import java.util.concurrent.CancellationException
import java.util.concurrent.ExecutionException

/**
 * Adapts a blocking Java [JavaNodeInterceptor] to a node interceptor: the interceptor runs on [dispatcher] and is
 * interrupted when the node is cancelled; its `proceed` runs the rest of the chain in a coroutine of the node
 * (under a supervisor, so that a failure it hands back to the interceptor does not cancel the node) and waits for it.
 *
 * The interceptor's exception is carried out of `runInterruptible` as a value and thrown in the node's coroutine, as
 * it is (see `blockingBody`).
 */
internal fun blockingInterceptor(interceptor: JavaNodeInterceptor, dispatcher: CoroutineDispatcher): NodeInterceptor =
    BlockingInterceptor(interceptor, dispatcher)

private class BlockingInterceptor(
    private val interceptor: JavaNodeInterceptor,
    private val dispatcher: CoroutineDispatcher,
) : NodeInterceptor {
    override val wrapsMapTasks: Boolean = interceptor.wrapsMapTasks

    override suspend fun intercept(chain: NodeChain): NodeWrites {
        val context = currentCoroutineContext()
        val supervisor = SupervisorJob(context[Job])
        try {
            val javaChain = BlockingChain(chain, CoroutineScope(context + supervisor))
            val outcome: Any? = runInterruptible(dispatcher) {
                try {
                    interceptor.intercept(javaChain)
                } catch (e: Throwable) {
                    Failure(e)
                }
            }
            if (outcome is Failure) {
                currentCoroutineContext().ensureActive() // an interrupt caused by cancellation ends the node cancelled
                throw outcome.error
            }
            return outcome as NodeWrites? ?: throw NullPointerException(
                "The interceptor of node '${chain.nodeId}' returned null; return chain.proceed(), or NodeWrites.EMPTY.",
            )
        } finally {
            supervisor.cancel()
        }
    }
}

private class Failure(val error: Throwable)

private class BlockingChain(
    private val chain: NodeChain,
    private val scope: CoroutineScope,
) : JavaNodeInterceptor.Chain {
    override val nodeId: String get() = chain.nodeId
    override val runId: String get() = chain.runId
    override val attempt: Int get() = chain.attempt
    override val executionCount: Int get() = chain.executionCount
    override val path: String get() = chain.path
    override val task: Int get() = chain.task
    override val state: State get() = chain.state

    override fun proceed(): NodeWrites {
        val rest = scope.future { chain.proceed() }
        try {
            return rest.get()
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        } catch (e: CancellationException) {
            throw InterruptedException("The run was cancelled while node '${chain.nodeId}' ran.")
        } catch (e: InterruptedException) {
            rest.cancel(true)
            throw e
        }
    }

    override fun charge(meter: String, amount: Double) = chain.charge(meter, amount)

    override fun toString(): String = "JavaNodeInterceptor.Chain($chain)"
}
