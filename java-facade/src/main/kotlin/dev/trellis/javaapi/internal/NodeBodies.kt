package dev.trellis.javaapi.internal

import dev.trellis.graph.NodeBody
import dev.trellis.javaapi.AsyncNodeAction
import dev.trellis.javaapi.NodeAction
import dev.trellis.javaapi.NodeContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.future.await
import kotlinx.coroutines.job
import kotlinx.coroutines.runInterruptible
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import java.util.concurrent.Future

/**
 * Adapts a blocking [NodeAction] to a node body: the action runs on [dispatcher] and is interrupted when the
 * node is cancelled.
 *
 * The action's exception is carried out of `runInterruptible` as a value and thrown in the node's own
 * coroutine: thrown across the dispatch it could be replaced by a copy (coroutines' stack-trace recovery),
 * and the run's error must be the node's own exception.
 */
internal fun blockingBody(action: NodeAction, dispatcher: CoroutineDispatcher): NodeBody = {
    val context = NodeContext(this, currentCoroutineContext().job)
    val failure = runInterruptible(dispatcher) {
        try {
            action.run(context)
            null
        } catch (e: Throwable) { // rethrown below, fatal errors included
            e
        }
    }
    if (failure != null) {
        currentCoroutineContext().ensureActive() // an interrupt caused by cancellation ends the node cancelled
        throw failure
    }
}

/**
 * Adapts an [AsyncNodeAction] to a node body: the attempt ends when the returned stage completes; cancelling
 * the node cancels the stage.
 */
internal fun asyncBody(action: AsyncNodeAction): NodeBody = {
    val context = NodeContext(this, currentCoroutineContext().job)
    // Declared non-null, but a Java action can still return null.
    val stage: CompletionStage<*>? = action.run(context)
    stage ?: throw NullPointerException(
        "Async node '$nodeId' returned null; return a CompletionStage, e.g. CompletableFuture.completedFuture(null).",
    )
    val failure = try {
        stage.handle { _, error -> error }.await()
    } catch (e: CancellationException) {
        (stage as? Future<*>)?.cancel(true)
        throw e
    }
    if (failure != null) throw (failure as? CompletionException)?.cause ?: failure
}
