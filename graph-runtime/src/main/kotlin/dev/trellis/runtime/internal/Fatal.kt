package dev.trellis.runtime.internal

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.isActive
import kotlin.coroutines.CoroutineContext

/**
 * Rethrows this throwable when no code may handle it as an ordinary failure:
 * - a [CancellationException] while the coroutine of [context] is cancelled: the cancellation of the run or of
 *   its caller, which must reach the caller (`docs/semantics.md` §6). A CancellationException while that coroutine
 *   is active is somebody's own exception (a node's, a store's internal timeout) and stays a failure;
 * - a fatal [VirtualMachineError] (an `OutOfMemoryError`, say); a [StackOverflowError] is the failure of the code
 *   that overflowed.
 *
 * Pass null for [context] where the caught code is not suspending (a reducer, a condition): then only fatal errors
 * are rethrown. Every `catch (e: Throwable)` or `catch (e: Exception)` of the runtime that handles what it caught
 * calls this first.
 */
internal fun Throwable.rethrowIfFatal(context: CoroutineContext?) {
    if (this is CancellationException && context != null && !context.isActive) throw this
    if (this is VirtualMachineError && this !is StackOverflowError) throw this
}

/**
 * For what a node's body threw: [rethrowIfFatal], and, whatever it threw, the cancellation of [context] when that
 * coroutine is cancelled. A body cancelled with its run often fails with what the cancellation caused (an I/O call
 * interrupted, a resource closed under it, a fleet claim found lost); that is the cancellation, not a failure of the
 * node: the execution ends `CANCELLED` and no failure is recorded (`docs/semantics.md` §6).
 */
internal fun Throwable.rethrowIfCancelled(context: CoroutineContext) {
    rethrowIfFatal(context)
    context.ensureActive()
}
