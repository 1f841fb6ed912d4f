package dev.trellis.javaapi

import dev.trellis.checkpoint.RunInfo
import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.javaapi.internal.StoredRuns
import dev.trellis.javaapi.internal.resultOf
import dev.trellis.javaapi.internal.runHere
import dev.trellis.runtime.CheckpointInfo
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.GraphRunException
import dev.trellis.runtime.JavaCaller
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.RunResult
import dev.trellis.runtime.RunSnapshot
import dev.trellis.runtime.events
import dev.trellis.runtime.invoke
import dev.trellis.runtime.loadSnapshot
import dev.trellis.runtime.resume
import dev.trellis.runtime.resumeEvents
import dev.trellis.runtime.retry
import dev.trellis.runtime.retryEvents
import dev.trellis.runtime.start
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.future.future
import kotlinx.coroutines.jdk9.flowPublish
import kotlinx.coroutines.reactive.publish
import org.reactivestreams.Publisher
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.Flow
import java.util.concurrent.TimeoutException
import java.util.function.Consumer
import java.util.function.UnaryOperator
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.flow.Flow as EventFlow

/**
 * Runs one graph for Java callers: as a [CompletableFuture], blocking, as a JDK [Flow.Publisher] or a
 * Reactive Streams [Publisher] of events, or with a [Consumer] of events. A runner is immutable and
 * thread-safe; every call starts a fresh, isolated run. Create one with [Trellis.runner].
 *
 * Inputs are a `State` of the graph's schema or a `Map` from key names to values, checked against the
 * schema: an unknown key or a value of the wrong type throws [IllegalArgumentException] naming the key.
 *
 * ```java
 * TrellisRunner runner = Trellis.runner(graph);
 * CompletableFuture<RunResult> done = runner.invokeAsync(Map.of("question", "Why?"));
 * done.cancel(true);                         // cancels the run's nodes cooperatively
 * ```
 *
 * Cancellation: cancelling the future, the subscription or the [JavaRunHandle], or interrupting the thread blocked in
 * [invoke], cancels every running node; blocking nodes of a [JavaGraph] are interrupted. Failures: a failed run
 * fails with [GraphRunException], whose cause is the node's own exception and whose `result` holds everything the
 * run did; [Failures.cause] and [Failures.result] get at both through a future's `CompletionException`.
 *
 * Persistence: with [JavaRunOptions.Builder.checkpointing], runs save checkpoints, and [resumeAsync],
 * [forkAsync], [checkpointsAsync], [stateAtAsync] and [takeSnapshotAsync] read them from its store; they
 * follow the same cancellation and failure rules as [invokeAsync]. [runsAsync], [pruneAsync] and [deleteAsync]
 * list and remove runs. See `docs/java.md`.
 *
 * Tracing: with [JavaRunOptions.Builder.instrumentation] (e.g. a `TrellisTelemetry`), every run this runner starts,
 * resumes or streams is traced, as a child of the span current on the calling thread.
 */
public class TrellisRunner internal constructor(
    /** The graph this runner runs. */
    public val graph: Graph,
    /** The options of every run. */
    public val options: JavaRunOptions,
) {
    private val runOptions = options.runOptions

    // JavaCaller: the runtime's error messages name the facade's calls.
    private val context = (runOptions.dispatcher ?: Dispatchers.Default) + JavaCaller

    // Failures reach the caller through futures and handles; nothing is left for a global handler to print.
    private val scope = CoroutineScope(SupervisorJob() + context + CoroutineExceptionHandler { _, _ -> })

    private val instrumentation = options.instrumentationOrNull

    private val stored = StoredRuns(graph, options, scope)

    /**
     * How a run of [invokeAsync] starts: on the calling thread until it first suspends (no hand-off to the pool and
     * no wake-up of the caller for a run that never waits), unless the options name an executor.
     */
    private val start = if (runOptions.dispatcher == null) CoroutineStart.UNDISPATCHED else CoroutineStart.DEFAULT

    /** What a run started now on this thread carries: the instrumentation's caller context (a trace context). */
    private fun caller(): CoroutineContext = instrumentation?.callerContext() ?: EmptyCoroutineContext

    /** The events of a run started by [run], through the options' instrumentation if any. */
    private fun instrumented(resumes: String?, run: (RunOptions) -> EventFlow<RunEvent>): EventFlow<RunEvent> =
        instrumentation?.instrument(graph, runOptions, resumes, run) ?: run(runOptions)

    /** A run from [input] to its result, instrumented when the options say so. */
    private suspend fun runToEnd(input: State): RunResult =
        if (instrumentation == null) {
            graph.invoke(input, runOptions)
        } else {
            resultOf(instrumented(null) { graph.events(input, it) })
        }

    /** This runner's graph with other [options]. */
    public fun withOptions(options: JavaRunOptions): TrellisRunner = TrellisRunner(graph, options)

    /**
     * Starts a run from [input] and returns its result as a future.
     *
     * `cancel(true)` on the future cancels the run. A failed run completes the future exceptionally with a
     * [GraphRunException] whose cause is the failing node's own exception (`join()` wraps it in a
     * `CompletionException`, `get()` in an `ExecutionException`, as `CompletableFuture` does): `Failures.cause(e)`
     * is the node's exception, `Failures.result(e)` the run's result, whichever layer `e` is.
     *
     * The run starts on the calling thread, as the blocking [invoke] does: its loop and the `node`s it starts inline
     * run here until the run first waits (for a blocking or async node, parallel branches, a retry's delay); it then
     * goes on on the coroutine pool, where the future completes. A run of inline nodes only has ended when this
     * returns, with no hand-off to another thread and no wake-up. With an executor in the options, the run goes
     * there at once.
     */
    public fun invokeAsync(input: State): CompletableFuture<RunResult> =
        if (instrumentation == null) {
            scope.future(start = start) { graph.invoke(input, runOptions) }
        } else {
            scope.future(caller(), start) { runToEnd(input) }
        }

    /** As [invokeAsync], with input values by key name. @throws IllegalArgumentException naming a bad key. */
    public fun invokeAsync(input: Map<String, Any?>): CompletableFuture<RunResult> = invokeAsync(stateOf(input))

    /**
     * Runs the graph from [input] on the calling thread and returns its result: the run's loop and the nodes it can
     * start inline run right here, with no hand-off to another thread (parallel branches and nodes that take long
     * still run on the coroutine pool, blocking nodes on the graph's executor). With an executor in the options,
     * the run goes there and this thread waits.
     *
     * Interrupting the calling thread cancels the run: running nodes are cancelled (blocking ones interrupted), and
     * once the run has ended `CANCELLED` this throws an `InterruptedException` saying so, with the thread's interrupt
     * flag set again. A thread interrupted before the call starts no run.
     *
     * @throws GraphRunException when the run fails; its cause is the failing node's own exception.
     * @throws InterruptedException when the calling thread is interrupted; the run is then cancelled.
     */
    @Throws(InterruptedException::class)
    public fun invoke(input: State): RunResult = invokeHere(input, null)

    /** As [invoke], with input values by key name. @throws IllegalArgumentException naming a bad key. */
    @Throws(InterruptedException::class)
    public fun invoke(input: Map<String, Any?>): RunResult = invoke(stateOf(input))

    /**
     * As [invoke], waiting at most [timeout] for the result.
     *
     * @throws TimeoutException when the run did not finish in time; the run is then cancelled.
     * @throws GraphRunException when the run fails; its cause is the failing node's own exception.
     * @throws InterruptedException when the calling thread is interrupted; the run is then cancelled.
     */
    @Throws(InterruptedException::class, TimeoutException::class)
    public fun invoke(input: State, timeout: Duration): RunResult = invokeHere(input, timeout)

    /** As [invoke] with a timeout, with input values by key name. */
    @Throws(InterruptedException::class, TimeoutException::class)
    public fun invoke(input: Map<String, Any?>, timeout: Duration): RunResult = invoke(stateOf(input), timeout)

    /**
     * The events of a run from [input] as a JDK [Flow.Publisher]. Each subscription starts a fresh run; the
     * stream ends after the run's terminal event (a failed run ends with `RunFailed`, not `onError`).
     * Demand is honoured: a slow subscriber suspends the run, nothing is dropped. Cancelling the
     * subscription cancels the run. Passes the Reactive Streams TCK.
     */
    public fun events(input: State): Flow.Publisher<RunEvent> {
        val events = instrumented(null) { graph.events(input, it) }
        return flowPublish(context + caller()) { events.collect { send(it) } }
    }

    /** As [events], with input values by key name. */
    public fun events(input: Map<String, Any?>): Flow.Publisher<RunEvent> = events(stateOf(input))

    /** As [events], as a Reactive Streams [Publisher] (for Reactor, RxJava, Mutiny, ...). */
    public fun reactiveEvents(input: State): Publisher<RunEvent> {
        val events = instrumented(null) { graph.events(input, it) }
        return publish(context + caller()) { events.collect { send(it) } }
    }

    /** As [reactiveEvents], with input values by key name. */
    public fun reactiveEvents(input: Map<String, Any?>): Publisher<RunEvent> = reactiveEvents(stateOf(input))

    /**
     * Starts a run from [input] and passes every event to [onEvent], in order, one at a time, the terminal one
     * included; a slow consumer slows the run down (nothing is dropped). Returns a handle to cancel the run
     * or wait for its result.
     */
    public fun start(input: State, onEvent: Consumer<RunEvent>): JavaRunHandle =
        JavaRunHandle(graph.start(scope, input, runOptions) { onEvent.accept(it) })

    /** As [start], with input values by key name. */
    public fun start(
        input: Map<String, Any?>,
        onEvent: Consumer<RunEvent>,
    ): JavaRunHandle = start(stateOf(input), onEvent)

    /**
     * Continues run [runId] from its latest checkpoint in the options' checkpoint store: completed nodes do
     * not run again; nodes that were running when it stopped (crash, drain, interrupt) run again. Same
     * cancellation and failure rules as [invokeAsync]; a run that already ended fails the future with
     * `IllegalStateException` (fork it instead). A run another process holds fails it with `RunOwnedException`, at
     * once or after `Checkpointing.withLeaseWait(wait)` for a crashed owner's lease to lapse (`docs/persistence.md`).
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun resumeAsync(runId: String): CompletableFuture<RunResult> = resumeAsync(runId, emptyMap())

    /**
     * As [resumeAsync], answering the run's single pending interrupt with [answer]: the interrupted node runs
     * again and its `ctx.interrupt(...)` returns [answer]. The future fails with `IllegalArgumentException`
     * when the run has no pending interrupt or more than one (answer those by node id), and with
     * `IllegalStateException` when the run already ended (fork it instead).
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun resumeAsync(runId: String, answer: String): CompletableFuture<RunResult> {
        requireStore("resumeAsync")
        if (instrumentation == null) return scope.future { graph.resume(runId, runOptions, answer) }
        return scope.future(caller()) { resultOf(instrumented(runId) { graph.resumeEvents(runId, it, answer) }) }
    }

    /**
     * As [resumeAsync], answering pending interrupts by node id. The future fails with
     * `IllegalArgumentException` when an answer names a node without a pending interrupt.
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun resumeAsync(runId: String, answers: Map<String, String>): CompletableFuture<RunResult> {
        requireStore("resumeAsync")
        val copy = answers.toMap()
        if (instrumentation == null) return scope.future { graph.resume(runId, runOptions, copy) }
        return scope.future(caller()) { resultOf(instrumented(runId) { graph.resumeEvents(runId, it, copy) }) }
    }

    /**
     * The events of the continuation of run [runId] (see [resumeAsync]) as a JDK [Flow.Publisher], with the same
     * rules as [events]: each subscription resumes the run once; a run that already ended, or a checkpoint that
     * cannot be loaded, ends the stream with `onError`.
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun resumeEvents(runId: String): Flow.Publisher<RunEvent> = resumeEvents(runId, emptyMap())

    /**
     * As [resumeEvents], answering the run's single pending interrupt with [answer] (see `resumeAsync(runId, answer)`).
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun resumeEvents(runId: String, answer: String): Flow.Publisher<RunEvent> {
        requireStore("resumeEvents")
        val events = instrumented(runId) { graph.resumeEvents(runId, it, answer) }
        return flowPublish(context + caller()) { events.collect { send(it) } }
    }

    /**
     * As [resumeEvents], answering pending interrupts by node id.
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun resumeEvents(runId: String, answers: Map<String, String>): Flow.Publisher<RunEvent> {
        requireStore("resumeEvents")
        val copy = answers.toMap()
        val events = instrumented(runId) { graph.resumeEvents(runId, it, copy) }
        return flowPublish(context + caller()) { events.collect { send(it) } }
    }

    /**
     * Retries run [runId], which ended `FAILED`, from its last checkpoint before the failure: the failed node(s) run
     * again, every node whose completion was checkpointed keeps it, and the retry's first checkpoint (labelled
     * `RETRY`) records the attempt in the run's history (`docs/persistence.md`, "Retrying a failed run"). The future
     * fails with `IllegalStateException` when the run did not fail (resume it) or compensated, with
     * `CheckpointFormatException` when the graph changed without a migration, and with `GraphRunException` when the
     * retry fails in turn.
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun retryAsync(runId: String): CompletableFuture<RunResult> {
        requireStore("retryAsync")
        return scope.future { graph.retry(runId, runOptions) }
    }

    /**
     * The events of the retry of run [runId] (see [retryAsync]) as a JDK [Flow.Publisher], with the same rules as
     * [resumeEvents].
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun retryEvents(runId: String): Flow.Publisher<RunEvent> {
        requireStore("retryEvents")
        val events = graph.retryEvents(runId, runOptions)
        return flowPublish(context) { events.collect { send(it) } }
    }

    /**
     * Starts a new run (id from the settings, or a fresh one) from checkpoint [sequence] of run [runId], with
     * the state changed by [edit] (time travel). The original run is not touched. Same cancellation and
     * failure rules as [invokeAsync].
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun forkAsync(runId: String, sequence: Long, edit: UnaryOperator<State>): CompletableFuture<RunResult> =
        stored.fork(runId, sequence, edit)

    /** As [forkAsync], with the state as it was. @throws IllegalStateException when the options have no checkpointing. */
    public fun forkAsync(runId: String, sequence: Long): CompletableFuture<RunResult> =
        forkAsync(runId, sequence, UnaryOperator.identity())

    /**
     * The checkpoints of run [runId] in the options' checkpoint store, oldest first (empty for an unknown run).
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun checkpointsAsync(runId: String): CompletableFuture<List<CheckpointInfo>> = stored.checkpoints(runId)

    /**
     * The state at checkpoint [sequence] of run [runId] (a `sequence` of [CheckpointInfo]).
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun stateAtAsync(runId: String, sequence: Long): CompletableFuture<State> = stored.stateAt(runId, sequence)

    /**
     * A resumable snapshot of the latest checkpoint of run [runId]; store its `toJson()` anywhere and read it
     * back with [loadSnapshot].
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun takeSnapshotAsync(runId: String): CompletableFuture<RunSnapshot> = stored.snapshot(runId)

    /**
     * Reads a snapshot of this runner's graph from its JSON text, validating it.
     *
     * @throws dev.trellis.runtime.CheckpointFormatException naming what is wrong.
     */
    public fun loadSnapshot(json: String): RunSnapshot =
        graph.loadSnapshot(json, options.checkpointingOrNull?.migrations ?: emptyList())

    /**
     * Runs the graph on from [snapshot] as a new run (id from the settings, or a fresh one): a resumable
     * snapshot continues where its run was. Needs no checkpoint store. Same cancellation and failure rules as
     * [invokeAsync].
     */
    public fun resumeAsync(snapshot: RunSnapshot): CompletableFuture<RunResult> =
        scope.future { graph.resume(snapshot, runOptions) }

    /**
     * Deletes run [runId] with all its checkpoints from the options' checkpoint store (unknown runs are ignored).
     * A process still writing it is fenced out: its next checkpoint fails with `FencedOutException` and its run
     * ends `FAILED`. Reuse the id for a new run only after this completed.
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun deleteAsync(runId: String): CompletableFuture<Void?> = stored.delete(runId)

    /**
     * Deletes old checkpoints of run [runId] from the options' checkpoint store, keeping the [keepLatest] newest
     * and every checkpoint they need to be restored; completes with how many were deleted. The run can still be
     * resumed, and forked from the kept checkpoints.
     *
     * @throws IllegalStateException when the options have no checkpointing.
     * @throws IllegalArgumentException when [keepLatest] is less than 1.
     */
    public fun pruneAsync(runId: String, keepLatest: Int): CompletableFuture<Int> = stored.prune(runId, keepLatest)

    /**
     * The runs of this runner's graph in the options' checkpoint store, ordered by run id: each with its latest
     * checkpoint's sequence and status (`RUNNING`, `INTERRUPTED`, `DRAINED`, `COMPLETED`, `FAILED`) and its lease.
     * Runs of other graphs sharing the store, and runs without a checkpoint yet, are left out.
     *
     * @throws IllegalStateException when the options have no checkpointing.
     */
    public fun runsAsync(): CompletableFuture<List<RunInfo>> = stored.runs()

    private fun requireStore(what: String): Checkpointing = stored.checkpointing(what)

    private fun stateOf(input: Map<String, Any?>): State = graph.schema.stateOf(input)

    /** The blocking [invoke]: the run in a `runBlocking` on the calling thread, whose interruption cancels it. */
    private fun invokeHere(input: State, timeout: Duration?): RunResult =
        runHere(graph.id, JavaCaller + caller(), timeout) { runToEnd(input) }

    override fun toString(): String = "TrellisRunner(${graph.id}, $options)"
}
