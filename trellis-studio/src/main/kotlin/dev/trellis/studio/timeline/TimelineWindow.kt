package dev.trellis.studio.timeline

import java.time.Duration
import java.util.Locale
import kotlin.math.ceil
import kotlin.math.log10

/**
 * The part of a run a timeline draws: from [from] to [to] after the run's start, spread over the plot's width. The
 * whole run by default; a narrower window is a zoom (a loop of short executions after a long one reads at any scale,
 * the drawing staying as wide as the page). Bars and marks outside the window are left out, bars across its edges cut.
 */
internal class TimelineWindow(val from: Duration, val to: Duration, val total: Duration) {
    init {
        require(!from.isNegative && to > from) { "A timeline window must start at 0 or later and end after it starts." }
    }

    private val span = (to - from).toNanos().toDouble()

    /** How many times the whole run is wider than the window (1 for the whole run). */
    val zoom: Double get() = maxOf(total.toNanos(), 1L) / span

    /** Where [offset] (after the run's start) falls, from 0.0 (the window's start) to 1.0 (its end). */
    fun fraction(offset: Duration): Double = (offset - from).toNanos() / span

    /** The offsets of the axis' [count] + 1 ticks, evenly across the window, with their labels. */
    fun ticks(count: Int): List<Pair<Double, String>> {
        val stepMillis = span / count / 1e6
        return (0..count).map { i ->
            val offsetMillis = from.toNanos() / 1e6 + stepMillis * i
            i / count.toDouble() to label(offsetMillis, stepMillis)
        }
    }

    /** An axis label precise enough to tell ticks [stepMillis] apart: milliseconds below 10 s, seconds above. */
    private fun label(millis: Double, stepMillis: Double): String = if (millis < 10_000 && stepMillis < 1_000) {
        String.format(Locale.ROOT, "%.${decimals(stepMillis)}f ms", millis)
    } else {
        String.format(Locale.ROOT, "%.${decimals(stepMillis / 1_000).coerceAtLeast(1)}f s", millis / 1_000)
    }

    private fun decimals(step: Double): Int = if (step >= 1) 0 else ceil(-log10(step)).toInt().coerceIn(0, 6)

    companion object {
        /** The whole run of [duration] (at least a nanosecond, so that an instant run still has a width). */
        fun whole(duration: Duration): TimelineWindow {
            val total = maxOf(duration, Duration.ofNanos(1))
            return TimelineWindow(Duration.ZERO, total, total)
        }
    }
}
