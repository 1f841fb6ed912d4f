package dev.trellis.javaapi

import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunResult
import java.util.Optional
import java.util.concurrent.CompletionException
import java.util.concurrent.ExecutionException

/**
 * Gets at what failed a run, whatever wraps it. A failed `invokeAsync(...).join()` throws a `CompletionException`
 * whose cause is a `GraphRunException` whose cause is the node's own exception (`get()` wraps in an
 * `ExecutionException` instead); these helpers take any of those layers.
 *
 * ```java
 * try {
 *     runner.invokeAsync(input).join();
 * } catch (CompletionException e) {
 *     Throwable error = Failures.cause(e);                 // what the node threw, e.g. your IOException
 *     Optional<RunResult> result = Failures.result(e);     // the run's state, per-node results, every error
 * }
 * runner.invokeAsync(input).exceptionally(e -> fallback(Failures.cause(e)));
 * ```
 */
public object Failures {
    /**
     * The exception that failed the run: the failing node's own exception (the very object it threw), or the
     * limit that stopped the run (`LimitExceededException`, `RunTimeoutException`, `NodeTimeoutException`).
     * Unwraps `CompletionException`, `ExecutionException` and `GraphRunException`; any other exception (a
     * `CancellationException` of a cancelled future, an `IllegalStateException` of a call that could not start)
     * is returned as it is.
     */
    @JvmStatic
    public fun cause(error: Throwable): Throwable {
        val unwrapped = unwrapFuture(error)
        return if (unwrapped is GraphRunException) unwrapped.cause ?: unwrapped else unwrapped
    }

    /** The failed run's result, when [error] is (or wraps) a `GraphRunException`; empty otherwise. */
    @JvmStatic
    public fun result(error: Throwable): Optional<RunResult> =
        Optional.ofNullable((unwrapFuture(error) as? GraphRunException)?.result)

    private fun unwrapFuture(error: Throwable): Throwable {
        var current = error
        while ((current is CompletionException || current is ExecutionException) &&
            current.cause != null
        ) {
            current = current.cause!!
        }
        return current
    }
}
