package dev.trellis.javaapi

import java.time.Duration

/**
 * The payload of a `RunEvent.Custom` reporting that a Java `node` (not a `blockingNode`) kept the run's thread for
 * [blockedFor], longer than [threshold]. A `node`'s action runs on the run's own threads, like a Kotlin node that does
 * not suspend: while it blocks (I/O, `Thread.sleep`, a lock, a long computation) it holds a thread other nodes need,
 * and the run cannot be cancelled. Move such work to a `blockingNode` (run on its executor and interrupted when the
 * run is cancelled) or an `asyncNode`. The same advice is logged as a warning by the `System.Logger` named
 * `dev.trellis.javaapi.node`.
 *
 * ```java
 * runner.events(input).subscribe(event -> {
 *     if (event instanceof RunEvent.Custom c && c.getPayload() instanceof BlockedThreadWarning w) {
 *         log.warn("{} blocked for {}", w.getNodeId(), w.getBlockedFor());
 *     }
 * });
 * ```
 */
public class BlockedThreadWarning internal constructor(
    /** The node whose action blocked. */
    public val nodeId: String,
    /** Its execution number. */
    public val execution: Int,
    /** How long its action kept the thread, to within about 10 ms. */
    public val blockedFor: Duration,
) {
    override fun equals(other: Any?): Boolean = other is BlockedThreadWarning && other.nodeId == nodeId &&
        other.execution == execution && other.blockedFor == blockedFor

    override fun hashCode(): Int = (nodeId.hashCode() * 31 + execution) * 31 + blockedFor.hashCode()

    override fun toString(): String =
        "BlockedThreadWarning(node '$nodeId'#$execution blocked the run's thread for ${blockedFor.toMillis()} ms; " +
            "use blockingNode for blocking work)"

    public companion object {
        @Volatile
        private var thresholdNanos: Long = Duration.ofSeconds(1).toNanos()

        /**
         * How long a `node`'s action may keep the run's thread before it is reported; 1 second by default. Applies to
         * every run of the JVM.
         */
        @JvmStatic
        public var threshold: Duration
            get() = Duration.ofNanos(thresholdNanos)
            set(value) {
                require(!value.isNegative && !value.isZero) { "The threshold must be positive, was $value." }
                thresholdNanos = value.toNanos()
            }

        internal fun over(nanos: Long): Boolean = nanos > thresholdNanos

        private val log: System.Logger = System.getLogger("dev.trellis.javaapi.node")

        /** Logs the warning for [nodeId] and returns the event payload. */
        internal fun report(nodeId: String, execution: Int, nanos: Long): BlockedThreadWarning {
            val warning = BlockedThreadWarning(nodeId, execution, Duration.ofNanos(nanos))
            log.log(
                System.Logger.Level.WARNING,
                "Node '$nodeId' (execution $execution) blocked the run's thread for ${nanos / 1_000_000} ms. A " +
                    "node's action runs on the run's own threads: blocking there holds a thread other nodes need and " +
                    "the run cannot be cancelled meanwhile. Declare it with blockingNode (or asyncNode) instead of " +
                    "node.",
            )
            return warning
        }
    }
}
