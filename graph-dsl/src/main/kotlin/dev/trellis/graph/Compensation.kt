package dev.trellis.graph

/**
 * Undoes what one completed execution of a node did outside the state, when the run fails afterwards
 * (`docs/semantics.md` §13.6). Declared with `node.compensate { state -> … }` in the graph builder.
 *
 * When a run fails, the compensations of its completed executions run one at a time, in reverse completion order,
 * each at most once; each gets the state as it was right after its execution's merge. A compensation that throws is
 * reported (`RunResult.compensations`, and suppressed on the run's error) and the others still run.
 *
 * ```kotlin
 * book.compensate { state -> bookings.cancel(state[Trip.booking]) }
 * ```
 */
public fun interface Compensation {
    /** Undoes the execution that left [state] (the run's state right after its merge). */
    public suspend fun compensate(state: State)
}
