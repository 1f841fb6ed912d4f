package dev.trellis.fleet

/**
 * What a [FleetWorker] does, for logs, metrics and progress displays. Called on the worker's threads; keep it quick.
 * Every method does nothing by default.
 */
public interface FleetObserver {
    /** The worker claimed [runId] ([attempt] is the claim number) and is about to run or resume it. */
    public fun claimed(runId: String, attempt: Int) {}

    /** The worker recorded that claim [attempt] of [runId] ended in [status] (QUEUED when it was drained). */
    public fun finished(runId: String, attempt: Int, status: FleetStatus) {}

    /** The worker found that another worker took claim [attempt] of [runId] over; it stopped the run locally. */
    public fun lost(runId: String, attempt: Int) {}

    /** Something went wrong that the worker survives (the database unreachable for a while); it tries again. */
    public fun problem(error: Throwable) {}
}
