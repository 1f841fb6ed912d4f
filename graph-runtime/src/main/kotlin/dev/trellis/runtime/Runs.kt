@file:JvmName("Runs")

package dev.trellis.runtime

import dev.trellis.graph.Graph
import dev.trellis.graph.State
import dev.trellis.runtime.internal.events.EventLog
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.engineEvents
import dev.trellis.runtime.internal.scheduling.resultFor
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

/**
 * Runs this graph from [input] and returns its result once it completes.
 *
 * The run's loop runs in the caller's coroutine (or on [RunOptions.dispatcher]); independent nodes run in
 * parallel as child coroutines. Cancelling the caller cancels every running node and rethrows the
 * cancellation.
 *
 * ```kotlin
 * val result = research.invoke(stateOf(Research.question to "Why is the sky blue?"))
 * println(result.state[Research.notes])
 * ```
 *
 * @throws GraphRunException when the run fails; its `result` holds what the run did, its cause is the first failure.
 */
public suspend fun Graph.invoke(
    input: State = schema.initialState(),
    options: RunOptions = RunOptions.DEFAULT,
): RunResult {
    return Engine(this, checkInput(input), options, null).resultFor(options)
}

/**
 * A cold flow of the events of a run of this graph from [input]: each collection starts a fresh, isolated
 * run. The flow ends after the run's terminal event ([RunEvent.RunCompleted], [RunEvent.RunFailed],
 * [RunEvent.RunCancelled], [RunEvent.RunInterrupted]); a failed run does not throw. Cancelling the collector
 * cancels the run. A slow collector suspends the run, nothing is dropped. The Java facade's twin is
 * `TrellisRunner.events`.
 *
 * ```kotlin
 * research.events(input).collect { event -> println(event) }
 * ```
 */
@JvmSynthetic
public fun Graph.events(
    input: State = schema.initialState(),
    options: RunOptions = RunOptions.DEFAULT,
): Flow<RunEvent> {
    val checked = checkInput(input)
    return engineEvents(options) { log -> Engine(this, checked, options, log) }
}

/**
 * Starts a run of this graph in [scope] and returns a handle on it; [onEvent] receives every event in order,
 * the terminal one included (also when the run is cancelled through the handle).
 *
 * ```kotlin
 * val handle = research.start(scope, input) { event -> log(event) }
 * handle.cancel()                 // the run ends CANCELLED
 * val result = handle.await()     // status CANCELLED
 * ```
 */
@JvmSynthetic
public fun Graph.start(
    scope: CoroutineScope,
    input: State = schema.initialState(),
    options: RunOptions = RunOptions.DEFAULT,
    onEvent: suspend (RunEvent) -> Unit = {},
): RunHandle {
    val checked = checkInput(input)
    val log = EventLog()
    val engine = Engine(this, checked, options, log)
    return launchRun(scope, options, engine.runId, log, { engine }, onEvent)
}

/**
 * Launches in [scope] the run of id [runId] whose engine [engineOf] makes (with [log] as its event log), and returns
 * its handle: [Graph.start], and `RemoteRuns.startResumed`.
 */
@OptIn(DelicateCoroutinesApi::class) // CoroutineStart.ATOMIC, see below
internal inline fun launchRun(
    scope: CoroutineScope,
    options: RunOptions,
    runId: String,
    log: EventLog,
    crossinline engineOf: suspend () -> Engine,
    noinline onEvent: suspend (RunEvent) -> Unit,
): RunHandle {
    val outcome = CompletableDeferred<RunResult>()
    val done = CompletableDeferred<RunResult>()
    // ATOMIC: the run reports its cancellation (and closes its event log) even when cancelled before it starts.
    val job = scope.launch(options.dispatcher ?: kotlin.coroutines.EmptyCoroutineContext, CoroutineStart.ATOMIC) {
        try {
            outcome.complete(engineOf().execute { outcome.complete(it) })
        } catch (e: Throwable) {
            outcome.completeExceptionally(e)
            throw e
        } finally {
            log.close()
        }
    }
    scope.launch {
        try {
            while (true) {
                val event = log.poll() ?: if (log.awaitEvent()) continue else break
                onEvent(event)
            }
            done.complete(outcome.await())
        } catch (e: Throwable) {
            log.cancel()
            job.cancel()
            done.completeExceptionally(e)
            throw e
        }
    }
    return RunHandle(runId, job, done)
}

private fun Graph.checkInput(input: State): State {
    require(input.schema === schema) {
        "The input state has schema '${input.schema.name}', but graph '$id' uses schema '${schema.name}'. " +
            "Build the input from ${schema.name}'s keys."
    }
    return input
}
