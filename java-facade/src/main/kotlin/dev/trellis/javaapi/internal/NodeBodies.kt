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
import kotlinx.coroutines.runInterruptible
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import java.util.concurrent.Future

/**
 * Adapts a non-blocking [NodeAction] to a node body: the action runs right in the node's coroutine, on whichever
 * worker of the run starts it (no dispatch, no other thread), like a Kotlin node that does not suspend. Its
 * exception, checked ones included, is thrown as it is.
 */
internal fun inlineBody(action: NodeAction): NodeBody = {
    val context = NodeContext(this, currentCoroutineContext())
    context.actionThread = Thread.currentThread()
    val failure = try {
        action.run(context)
        null
    } catch (e: Throwable) {
        // rethrown by finish, once the attempt's events are out
        e
    } finally {
        context.actionThread = null
    }
    context.finish(failure)
}

/**
 * Adapts a blocking [NodeAction] to a node body: the action runs on [dispatcher] and is interrupted when the
 * node is cancelled.
 *
 * The action's exception is carried out of `runInterruptible` as a value and thrown in the node's own
 * coroutine: thrown across the dispatch it could be replaced by a copy (coroutines' stack-trace recovery),
 * and the run's error must be the node's own exception.
 */
internal fun blockingBody(action: NodeAction, dispatcher: CoroutineDispatcher): NodeBody = {
    val context = NodeContext(this, currentCoroutineContext())
    val failure = runInterruptible(dispatcher) {
        try {
            action.run(context)
            null
        } catch (e: Throwable) {
            // rethrown below, fatal errors included
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
    val context = NodeContext(this, currentCoroutineContext())
    val failure = try {
        context.actionThread = Thread.currentThread()
        // Declared non-null, but a Java action can still return null.
        val stage: CompletionStage<*>? = try {
            action.run(context)
        } finally {
            context.actionThread = null
        }
        stage ?: throw NullPointerException(
            "Async node '$nodeId' returned null; return a CompletionStage, e.g. CompletableFuture.completedFuture(null).",
        )
        val error = try {
            stage.handle { _, error -> error }.await()
        } catch (e: CancellationException) {
            (stage as? Future<*>)?.cancel(true)
            throw e
        }
        if (error == null) null else (error as? CompletionException)?.cause ?: error
    } catch (e: Throwable) {
        // rethrown by finish, once the attempt's events are out
        e
    }
    context.finish(failure)
}
