package dev.trellis.runtime

import dev.trellis.graph.Graph
import kotlinx.coroutines.flow.Flow
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext

/**
 * Something that watches or wraps every run a runner starts — tracing is the one Trellis ships:
 * `trellis-opentelemetry`'s `TrellisTelemetry` is a `RunInstrumentation`. The Java facade's `JavaRunOptions` takes one
 * (`JavaRunOptions.builder().instrumentation(telemetry)`), so a Java run is traced whatever its store and settings,
 * without the facade knowing about OpenTelemetry.
 *
 * A runner calls [callerContext] on the thread that starts a run (a Java caller's thread, where its trace context is
 * current) and runs the run's coroutine with what it returns; then it collects the events of [instrument], which
 * starts the run with the options it is given (its own interceptors added) and passes the events on.
 *
 * ```kotlin
 * class CountingRuns : RunInstrumentation {
 *     val runs = AtomicInteger()
 *     override fun instrument(graph: Graph, options: RunOptions, resumedRunId: String?, run: (RunOptions) -> Flow<RunEvent>) =
 *         run(options).onStart { runs.incrementAndGet() }
 * }
 * ```
 */
public interface RunInstrumentation {
    /**
     * The coroutine context a run started now, on the calling thread, runs with — e.g. the caller's trace context as
     * a context element; empty by default.
     */
    public fun callerContext(): CoroutineContext = EmptyCoroutineContext

    /**
     * The events of one run of [graph]: [run] starts it with the options passed to it (usually [options] with an
     * interceptor added, see [RunOptions.withInterceptors]), and the returned flow must emit its events in order,
     * the terminal one included. [resumedRunId] is the id of the run being resumed, null for a fresh run.
     */
    public fun instrument(
        graph: Graph,
        options: RunOptions,
        resumedRunId: String?,
        run: (RunOptions) -> Flow<RunEvent>,
    ): Flow<RunEvent>
}
