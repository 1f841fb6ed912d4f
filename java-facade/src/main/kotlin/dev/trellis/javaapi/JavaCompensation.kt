package dev.trellis.javaapi

import dev.trellis.graph.Compensation
import dev.trellis.graph.State
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.runInterruptible

/**
 * Undoes what one completed execution of a node did outside the state when the run fails afterwards — the Java twin
 * of the graph model's `Compensation`, which suspends (`docs/semantics.md` §13.6, `docs/java.md`). Declared with
 * `JavaGraph.Builder.compensate(nodeId, compensation)`.
 *
 * When a run fails, the compensations of its completed executions run one at a time, in reverse completion order,
 * each at most once, each with the state as it was right after its execution. It may block: it runs on the graph's
 * executor. One that throws is reported (`RunResult.getCompensations()`, and suppressed on the run's error); the
 * others still run.
 *
 * ```java
 * builder.compensate("book", state -> bookings.cancel(state.get(booking)));
 * ```
 */
public fun interface JavaCompensation {
    /** Undoes the execution that left [state] (the run's state right after its merge). */
    @Throws(Exception::class)
    public fun compensate(state: State)
}

/**
 * [compensation] as a runtime compensation running on [dispatcher] (interrupted when the run is cancelled). Its exception is
 * carried out of the dispatcher as a value, so that the run reports the very object it threw.
 */
internal fun blockingCompensation(compensation: JavaCompensation, dispatcher: CoroutineDispatcher): Compensation =
    Compensation { state ->
        val failure: Throwable? = runInterruptible(dispatcher) {
            try {
                compensation.compensate(state)
                null
            } catch (e: Throwable) {
                e
            }
        }
        if (failure != null) {
            currentCoroutineContext().ensureActive() // an interrupt caused by cancellation ends it cancelled
            throw failure
        }
    }
