package dev.trellis.fleet

/** Where a run of the fleet's queue is (the `status` column of `trellis_fleet_runs`). */
public enum class FleetStatus {
    /** Waiting for a worker: new, answered after an interrupt, or put back by a draining worker. */
    QUEUED,

    /** Claimed by a worker that holds its lease (or held it: an expired lease makes the run claimable again). */
    RUNNING,

    /** Ended INTERRUPTED: waiting for answers to its interrupts ([FleetRun.answer]). */
    PAUSED,

    /** Ended COMPLETED; its final state is in [FleetResult.output]. */
    COMPLETED,

    /** Ended FAILED; the reason is in [FleetResult.error]. */
    FAILED,

    ;

    /** Whether the run no longer needs a worker until someone acts: PAUSED, COMPLETED or FAILED. */
    public val settled: Boolean get() = this == PAUSED || this == COMPLETED || this == FAILED
}
