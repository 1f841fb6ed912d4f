package dev.trellis.opentelemetry

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.graph.Graph
import dev.trellis.graph.NodeInterceptor
import dev.trellis.graph.State
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunInstrumentation
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.Status
import dev.trellis.runtime.events
import dev.trellis.runtime.resumeEvents
import io.opentelemetry.api.OpenTelemetry
import io.opentelemetry.api.trace.SpanContext
import io.opentelemetry.context.Context
import io.opentelemetry.extension.kotlin.asContextElement
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.buffer
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn
import kotlinx.coroutines.future.future
import kotlinx.coroutines.runBlocking
import java.util.concurrent.CompletableFuture
import kotlin.coroutines.CoroutineContext

/**
 * Traces and meters Trellis runs with OpenTelemetry (`docs/observability.md`): a span per run, a span per node
 * execution (current while the node's body runs, on whatever thread it runs, so spans an LLM or HTTP client
 * creates in a node are its children), span events for retries, interrupts, checkpoints and custom payloads that
 * are [SpanEventPayload]s, and run, node and checkpoint metrics.
 *
 * A run is traced when it is started through this object ([invoke], [events], [resume], [invokeBlocking],
 * [invokeAsync]); its span is a child of the caller's current context (`Context.current()`; in Kotlin, a coroutine
 * context holding `context.asContextElement()`). Checkpoint metrics and the link of a resumed run to the trace of
 * the run it resumes need the store wrapped with [instrument]. Runs started otherwise pay nothing.
 *
 * ```kotlin
 * val telemetry = TrellisTelemetry(GlobalOpenTelemetry.get())
 * val store = telemetry.instrument(JdbcCheckpointStore(dataSource))
 * val result = telemetry.invoke(graph, input, RunOptions(checkpointing = Checkpointing(store)))
 * ```
 *
 * It is also a [RunInstrumentation]: the Java facade traces every run of a runner whose settings take it, whatever
 * its store and other settings.
 *
 * ```java
 * TrellisTelemetry telemetry = new TrellisTelemetry(openTelemetry);
 * JavaRunOptions settings = JavaRunOptions.builder()
 *     .checkpointing(new Checkpointing(telemetry.instrument(new SqliteCheckpointStore(path))))
 *     .instrumentation(telemetry)
 *     .build();
 * RunResult result = Trellis.runner(graph, settings).invoke(input);   // traced
 * ```
 */
public class TrellisTelemetry(openTelemetry: OpenTelemetry) : RunInstrumentation {
    internal val tracer = openTelemetry.getTracer(INSTRUMENTATION, INSTRUMENTATION_VERSION)
    internal val metrics = TrellisMetrics(openTelemetry.getMeter(INSTRUMENTATION))

    // Failures reach the caller through the futures of invokeAsync; nothing is left for a global handler to print.
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default + CoroutineExceptionHandler { _, _ -> })

    /**
     * Runs [graph] like `Graph.invoke`, traced: returns the result once the run ends.
     * @throws GraphRunException when the run fails, as `Graph.invoke` does.
     */
    public suspend fun invoke(
        graph: Graph,
        input: State = graph.schema.initialState(),
        options: RunOptions = RunOptions.DEFAULT,
    ): RunResult {
        var result: RunResult? = null
        events(graph, input, options).collect { if (it is RunEvent.Terminal) result = it.result }
        return checkResult(checkNotNull(result) { "The run of graph '${graph.id}' ended without a terminal event." })
    }

    /**
     * Like [invoke], for Java and other blocking callers: the run's span is a child of `Context.current()` of the
     * calling thread, which blocks until the run ends.
     */
    @JvmOverloads
    public fun invokeBlocking(
        graph: Graph,
        input: State = graph.schema.initialState(),
        options: RunOptions = RunOptions.DEFAULT,
    ): RunResult {
        val caller = Context.current()
        return runBlocking(caller.asContextElement()) { invoke(graph, input, options) }
    }

    /**
     * Like [invoke], for Java callers that do not block: starts the run and returns its result as a future. The
     * run's span is a child of `Context.current()` of the calling thread, taken at the call. Cancelling the future
     * cancels the run; a failed run completes it exceptionally with `GraphRunException`.
     */
    @JvmOverloads
    public fun invokeAsync(
        graph: Graph,
        input: State = graph.schema.initialState(),
        options: RunOptions = RunOptions.DEFAULT,
    ): CompletableFuture<RunResult> {
        val caller = Context.current()
        return scope.future(caller.asContextElement()) { invoke(graph, input, options) }
    }

    /** Like `Graph.events`, traced: a cold flow of the events of a run of [graph]; each collection is a traced run. */
    @JvmSynthetic
    public fun events(
        graph: Graph,
        input: State = graph.schema.initialState(),
        options: RunOptions = RunOptions.DEFAULT,
    ): Flow<RunEvent> = instrument(graph, options, null) { traced -> graph.events(input, traced) }

    /**
     * Like `Graph.resume`, traced: continues run [runId] from its latest checkpoint. When the store was wrapped with
     * [instrument], the new run span links to the span of the run that saved that checkpoint.
     * @throws GraphRunException when the run fails.
     */
    public suspend fun resume(
        graph: Graph,
        runId: String,
        options: RunOptions,
        answers: Map<String, String> = emptyMap(),
    ): RunResult {
        var result: RunResult? = null
        resumeEvents(graph, runId, options, answers).collect { if (it is RunEvent.Terminal) result = it.result }
        return checkResult(checkNotNull(result) { "The resumed run '$runId' ended without a terminal event." })
    }

    /** Like `Graph.resumeEvents`, traced (see [resume]). */
    @JvmSynthetic
    public fun resumeEvents(
        graph: Graph,
        runId: String,
        options: RunOptions,
        answers: Map<String, String> = emptyMap(),
    ): Flow<RunEvent> = instrument(graph, options, runId) { traced -> graph.resumeEvents(runId, traced, answers) }

    /** The caller's `Context.current()`, so that a run started from this thread is a child of its current span. */
    override fun callerContext(): CoroutineContext = Context.current().asContextElement()

    /**
     * The events of a traced run (see [RunInstrumentation.instrument]): [run] gets [options] with the span
     * interceptor outermost. A resumed run ([resumedRunId]) links to the trace of the run that saved its latest
     * checkpoint when the store was wrapped with [instrument].
     */
    override fun instrument(
        graph: Graph,
        options: RunOptions,
        resumedRunId: String?,
        run: (RunOptions) -> Flow<RunEvent>,
    ): Flow<RunEvent> = if (resumedRunId == null) {
        traced(graph, null) { spans -> run(options.with(spans)) }
    } else {
        flow {
            val previous = options.checkpointing?.store?.latest(resumedRunId)?.let { TraceMetadata.read(it.metadata) }
            traced(graph, previous) { spans -> run(options.with(spans)) }.collect { emit(it) }
        }
    }

    /**
     * Wraps [store] so that checkpoint writes are measured (latency and size) and each checkpoint records the trace
     * of the run that saved it, for the link of a resumed run.
     */
    public fun instrument(
        store: CheckpointStore,
    ): CheckpointStore = if (store is TracedStore) store else TracedStore(store, metrics)

    private fun traced(
        graph: Graph,
        resumes: SpanContext?,
        events: (NodeInterceptor) -> Flow<RunEvent>,
    ): Flow<RunEvent> = flow {
        val run = RunTrace(this@TrellisTelemetry, graph, Context.current(), resumes)
        try {
            // The run's context is current in the run (its store calls, its nodes' coroutines), not in the collector.
            // The buffer makes the run a coroutine of its own: without it, flowOn with the caller's dispatcher runs
            // the run in the collector's coroutine, and kotlinx.coroutines 1.11 then leaves the run's context current
            // on the caller's thread after the run first suspends (kotlinx.coroutines issue 4755).
            events(run.nodes).flowOn(run.context.asContextElement()).buffer(Channel.BUFFERED).collect { event ->
                run.observe(event)
                emit(event)
            }
        } catch (e: Throwable) {
            run.abort(e)
            throw e
        }
    }

    /** These options with [spans] as the outermost run-level interceptor. */
    private fun RunOptions.with(spans: NodeInterceptor): RunOptions = withInterceptors(listOf(spans) + interceptors)

    private fun checkResult(result: RunResult): RunResult {
        if (result.status == Status.FAILED) throw GraphRunException(result)
        return result
    }

    internal companion object {
        const val INSTRUMENTATION = "dev.trellis"
        const val INSTRUMENTATION_VERSION = "0.1.0"
    }
}
