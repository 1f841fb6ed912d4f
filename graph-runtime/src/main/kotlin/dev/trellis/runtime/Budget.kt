package dev.trellis.runtime

import java.util.Collections
import kotlin.time.Duration
import kotlin.time.toKotlinDuration

/**
 * The limits of one run (`docs/semantics.md` §13.4): how many node executions it may start, how long it may run, and
 * how much of each named meter its nodes may charge (`NodeScope.charge("usd", 0.03)`). Immutable: `Budget()` has no
 * limits, each `with…` returns a copy with one more. Set it with `RunOptions(budget = …)`.
 *
 * Exceeding a limit stops the run with a [LimitExceededException] naming the limit, its value, the total and the node
 * that crossed it; the totals are in [RunResult.meters], in `RunEvent.MetersCharged` events and in checkpoints.
 *
 * ```kotlin
 * val budget = Budget().withMeter("usd", 2.0).withMeter("tokens", 50_000.0).withMaxNodeExecutions(200)
 * graph.invoke(input, RunOptions(budget = budget))
 * ```
 */
public class Budget private constructor(
    /** The most node executions the run may start, or null for the graph's `maxNodeExecutions` alone. */
    public val maxNodeExecutions: Int?,
    /** The most time the run may spend running, measured by the run's time source, or null for no limit. */
    @get:JvmSynthetic
    public val maxWallTime: Duration?,
    /** The limit of each meter, by name; a meter charged but not named here is counted, not limited. */
    public val meters: Map<String, Double>,
) {
    /** A budget without limits. */
    public constructor() : this(null, null, emptyMap())

    /**
     * This budget with at most [limit] node executions; the smaller of this and the graph's `maxNodeExecutions`
     * applies.
     */
    public fun withMaxNodeExecutions(limit: Int): Budget {
        require(limit >= 1) { "maxNodeExecutions must be at least 1, but was $limit." }
        return Budget(limit, maxWallTime, meters)
    }

    /** This budget with at most [limit] of time spent running (by the run's time source). */
    @JvmSynthetic
    public fun withMaxWallTime(limit: Duration): Budget {
        require(limit.isPositive() && limit.isFinite()) { "maxWallTime must be positive and finite, but was $limit." }
        return Budget(maxNodeExecutions, limit, meters)
    }

    /** This budget with at most [limit] of time spent running (by the run's time source); for Java. */
    public fun withMaxWallTime(limit: java.time.Duration): Budget = withMaxWallTime(limit.toKotlinDuration())

    /**
     * This budget with meter [name] limited to [limit]: the run stops when its total goes above it (reaching it is
     * allowed). Setting a meter again replaces its limit.
     */
    public fun withMeter(name: String, limit: Double): Budget {
        require(name.isNotBlank()) { "A meter's name must not be blank." }
        require(limit.isFinite() && limit >= 0.0) {
            "The limit of meter '$name' must be finite and not negative, but was $limit."
        }
        val copy = LinkedHashMap(meters)
        copy[name] = limit
        return Budget(maxNodeExecutions, maxWallTime, Collections.unmodifiableMap(copy))
    }

    override fun toString(): String =
        "Budget(maxNodeExecutions=$maxNodeExecutions, maxWallTime=$maxWallTime, meters=$meters)"
}
