package dev.trellis.javaapi.internal

import dev.trellis.graph.NodeBody
import dev.trellis.graph.NodeScope
import dev.trellis.graph.State
import dev.trellis.javaapi.AsyncNodeAction
import dev.trellis.javaapi.BlockedThreadWarning
import dev.trellis.javaapi.JavaNodeScope
import dev.trellis.javaapi.MapTask
import dev.trellis.javaapi.NodeAction
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.future.await
import kotlinx.coroutines.runInterruptible
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import java.util.concurrent.Future
import java.util.function.BiConsumer

/*
 * Java node bodies (`docs/java.md`): how a Java `NodeAction`, `AsyncNodeAction` or map task becomes a node body — run
 * inline in the node's coroutine, awaited as a `CompletionStage`, or run blocking on an executor — with a
 * `JavaNodeScope` for the body and its exceptions, checked ones included, thrown as they are.
 */

/**
 * Adapts a non-blocking [NodeAction] to a node body: the action runs right in the node's coroutine, on whichever
 * worker of the run starts it (no dispatch, no other thread), like a Kotlin node that does not suspend. Its
 * exception, checked ones included, is thrown as it is.
 */
internal fun inlineBody(action: NodeAction): NodeBody = { runInline(this) { action.run(it) } }

/** Adapts a non-blocking map [task] to a task body, run like [inlineBody]'s action. */
internal fun <T> inlineTask(task: MapTask<T>): suspend NodeScope.(T) -> Unit = { item ->
    runInline(this) { task.run(it, item) }
}

/** Adapts a mapping's output [block] to the Kotlin output block, run like [inlineBody]'s action. */
internal fun outputBody(block: BiConsumer<JavaNodeScope, State>): suspend NodeScope.(State) -> Unit = { child ->
    runInline(this) { block.accept(it, child) }
}

/**
 * Runs [action] with a [JavaNodeScope] of [scope] on this thread, then ends the attempt ([JavaNodeScope.finish]). An action
 * that kept the thread past [BlockedThreadWarning.threshold] is reported: a log line and a custom event.
 */
private suspend inline fun runInline(scope: NodeScope, action: (JavaNodeScope) -> Unit) {
    val context = JavaNodeScope(scope, currentCoroutineContext())
    var failure: Throwable? = null
    timed(scope, context) {
        context.actionThread = Thread.currentThread()
        failure = try {
            action(context)
            null
        } catch (e: Throwable) {
            // rethrown by finish, once the attempt's events are out
            e
        }
        // Not in a `finally`: nothing escapes the catch, and a `finally` is compiled once per exit.
        context.actionThread = null
    }
    // The context goes to finish alone (and to warnBlocked only when the action blocked): passed to another call on
    // every execution, the JIT would allocate it instead of taking its fields apart (+32 B per Java node in the bench
    // module's chain).
    context.finish(failure)
}

/**
 * Runs [action] and, when it kept the thread past [BlockedThreadWarning.threshold], reports it through [context] (a
 * log line and a deferred custom event, before the attempt's end). Not a suspend function: its clock reading is a
 * local of this code only, where in the suspend caller it would be kept across `finish` in its frame object.
 *
 * The check after the action is a call: inlined, it made the task body's `invokeSuspend` more than the 325 bytes of
 * bytecode up to which HotSpot inlines a hot method, and the body's frame (56 B per task) was then allocated instead
 * of taken apart.
 */
private inline fun timed(scope: NodeScope, context: JavaNodeScope, action: () -> Unit) {
    val started = CoarseClock.nanos()
    action()
    checkBlocked(scope, context, started)
}

private fun checkBlocked(scope: NodeScope, context: JavaNodeScope, started: Long) {
    val took = CoarseClock.nanos() - started
    if (BlockedThreadWarning.over(took)) {
        context.warnBlocked(BlockedThreadWarning.report(scope.nodeId, scope.executionCount, took))
    }
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
    runOnExecutor(this, dispatcher) { action.run(it) }
}

/** Adapts a blocking map [task] to a task body, run on [dispatcher] like [blockingBody]'s action. */
internal fun <T> blockingTask(task: MapTask<T>, dispatcher: CoroutineDispatcher): suspend NodeScope.(T) -> Unit =
    { item -> runOnExecutor(this, dispatcher) { task.run(it, item) } }

/** Runs [action] with a [JavaNodeScope] of [scope] on [dispatcher], interruptibly; rethrows its failure here. */
private suspend fun runOnExecutor(scope: NodeScope, dispatcher: CoroutineDispatcher, action: (JavaNodeScope) -> Unit) {
    val context = JavaNodeScope(scope, currentCoroutineContext())
    val failure = runInterruptible(dispatcher) {
        try {
            action(context)
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
    val context = JavaNodeScope(this, currentCoroutineContext())
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
