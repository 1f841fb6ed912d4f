package dev.trellis.temporal

import java.time.Duration

/**
 * Settings of graphs run on Temporal, the same on every worker of a task queue.
 *
 * ```kotlin
 * TemporalWorkers.register(worker, listOf(research), TemporalOptions(maxValueBytes = 512 * 1024))
 * ```
 */
public class TemporalOptions @JvmOverloads constructor(
    /** The largest encoded state value a node may write (bytes of its JSON); above it the node fails, naming the key. */
    public val maxValueBytes: Int = 256 * 1024,
    /** The start-to-close timeout of the activity of a node without a timeout of its own. */
    public val activityTimeout: Duration = Duration.ofMinutes(10),
    /** Added to a node's own timeout to make its activity's start-to-close timeout (Trellis times the attempt). */
    public val activityTimeoutMargin: Duration = Duration.ofSeconds(30),
) {
    init {
        require(maxValueBytes > 0) { "maxValueBytes must be positive, but was $maxValueBytes." }
        require(!activityTimeout.isNegative && !activityTimeout.isZero) { "activityTimeout must be positive." }
    }
}
