package dev.trellis.runtime.internal.policies

import dev.trellis.runtime.Budget
import dev.trellis.runtime.LimitExceededException
import dev.trellis.runtime.RunEvent
import dev.trellis.runtime.internal.events.driverHead
import dev.trellis.runtime.internal.execution.Execution
import dev.trellis.runtime.internal.scheduling.Engine
import dev.trellis.runtime.internal.scheduling.Position
import dev.trellis.runtime.internal.scheduling.fail
import java.math.BigDecimal

/*
 * Budgets (`docs/semantics.md` §13.4): the charges an execution buffers ([Charges]), the run's exact totals
 * ([Meters], kept by the driver in the [Position] so that checkpoints carry them), and the checks of the run's
 * [Budget] at the driver's steps. A run without a budget whose nodes charge nothing allocates none of it.
 */

/** An execution's charges by meter, exact; filled by its body (and its tasks' and child runs') under its lock. */
internal class Charges {
    val amounts = LinkedHashMap<String, BigDecimal>(4)

    fun add(meter: String, amount: BigDecimal) {
        val old = amounts[meter]
        amounts[meter] = if (old == null) amount else old + amount
    }
}

/** Checks one charge's arguments; the amount as the exact decimal that reads back as it. */
internal fun chargeAmount(nodeId: String, meter: String, amount: Double): BigDecimal {
    require(meter.isNotBlank()) { "Node '$nodeId' charged a meter with a blank name; name the meter, e.g. \"tokens\"." }
    require(amount.isFinite() && amount >= 0.0) {
        "Node '$nodeId' charged $amount to meter '$meter'; a charge must be finite and not negative (totals only grow)."
    }
    return BigDecimal.valueOf(amount)
}

/** A run's totals by meter (exact, in the order first charged) and the time it spent in earlier segments. */
internal class Meters(
    val totals: LinkedHashMap<String, BigDecimal> = LinkedHashMap(),
    /** The time the run spent running up to the last checkpoint (restored: before this segment). */
    var spentNanos: Long = 0,
) {
    fun asDoubles(): Map<String, Double> {
        if (totals.isEmpty()) return emptyMap()
        val out = LinkedHashMap<String, Double>(totals.size * 2)
        for ((k, v) in totals) out[k] = v.toDouble()
        return java.util.Collections.unmodifiableMap(out)
    }

    /** As stored in checkpoints: exact decimal text. */
    fun encoded(): Map<String, String> = totals.mapValuesTo(LinkedHashMap()) { it.value.toPlainString() }

    /** The first meter of [budget], in its order, whose total is above its limit; null when none is. */
    fun exceeded(budget: Budget): String? {
        for ((meter, limit) in budget.meters) {
            val total = totals[meter] ?: continue
            if (total > BigDecimal.valueOf(limit)) return meter
        }
        return null
    }

    companion object {
        /** The totals stored in a checkpoint, or null when it holds none. */
        fun decoded(meters: Map<String, String>, spentNanos: Long): Meters? {
            if (meters.isEmpty() && spentNanos == 0L) return null
            return Meters(meters.mapValuesTo(LinkedHashMap()) { BigDecimal(it.value) }, spentNanos)
        }
    }
}

/** The run's meters, made on first use. */
internal val Engine.meters: Meters get() = position.meters ?: Meters().also { position.meters = it }

/**
 * Adds [execution]'s charges to the run's totals at its end; returns the crossing of a meter limit it caused, if any.
 * A child run (no budget) only counts; the top-level run posts the execution's `MetersCharged` event.
 */
internal fun Engine.chargeRun(execution: Execution, charges: Charges): LimitExceededException? {
    val totals = meters.totals
    for ((meter, amount) in charges.amounts) {
        val old = totals[meter]
        totals[meter] = if (old == null) amount else old + amount
    }
    if (nesting == null && outbox.enabled) {
        val own = Meters(charges.amounts).asDoubles()
        val now = meters.asDoubles()
        outbox.post { seq ->
            RunEvent.MetersCharged(driverHead(execution, seq, now()), own, now)
        }
    }
    val budget = options.budget ?: return null
    if (position.failed) return null
    val meter = meters.exceeded(budget) ?: return null
    val total = totals.getValue(meter).toDouble()
    return LimitExceededException.meter(meter, budget.meters.getValue(meter), total, execution.node.id)
}

/** The time the run has spent running, by its time source: earlier segments' and this one's so far. */
internal fun Engine.spentNanos(): Long = spentBefore + (nanoTime() - segmentStart)

/** The budget's `maxWallTime` crossed, checked when [node] ends or would start ([starting]); null if not crossed. */
internal fun Engine.wallTimeExceeded(node: String?, starting: Boolean): LimitExceededException? {
    val limit = wallLimitNanos
    if (limit < 0) return null
    val spent = spentNanos()
    if (spent <= limit) return null
    return LimitExceededException.wallTime(
        java.time.Duration.ofNanos(limit),
        java.time.Duration.ofNanos(spent),
        node,
        starting,
    )
}

/** Whether a run starting (resumed or forked) is already over its budget: fails it before anything starts. */
internal fun Engine.checkBudgetAtStart() {
    val budget = options.budget ?: return
    if (nesting != null) return
    val restored = position.meters
    val meter = restored?.exceeded(budget)
    val error = if (meter != null) {
        val total = restored.totals.getValue(meter).toDouble()
        LimitExceededException.meter(meter, budget.meters.getValue(meter), total, null)
    } else {
        wallTimeExceeded(null, starting = true)
    }
    if (error != null) fail(error)
}
