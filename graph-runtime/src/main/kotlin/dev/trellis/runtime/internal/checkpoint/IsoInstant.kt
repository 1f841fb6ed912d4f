package dev.trellis.runtime.internal.checkpoint

import java.time.Instant

/** The first second of year 0000 and the last of year 9999: the years [appendIso] writes itself. */
private const val FIRST_SECOND = -62_167_219_200L
private const val LAST_SECOND = 253_402_300_799L

/**
 * Appends [instant] as [Instant.toString] writes it (ISO-8601 in UTC, the fraction in groups of three digits, none
 * when zero), without the formatter's intermediate objects: a checkpoint's `createdAt` is written after every step.
 * Years outside 0000–9999 go through [Instant.toString].
 */
internal fun StringBuilder.appendIso(instant: Instant): StringBuilder {
    val seconds = instant.epochSecond
    if (seconds !in FIRST_SECOND..LAST_SECOND) return append(instant.toString())
    return appendSecond(seconds).appendFraction(instant.nano)
}

/**
 * Writes instants as [appendIso] does, keeping the text of the last whole second it wrote: the checkpoints of a run
 * mostly fall within one second, so most only need their fraction written. One per writer (not thread-safe).
 */
internal class IsoWriter {
    private var second = Long.MIN_VALUE
    private var secondText = ""

    fun append(out: StringBuilder, instant: Instant): StringBuilder {
        val seconds = instant.epochSecond
        if (seconds !in FIRST_SECOND..LAST_SECOND) return out.append(instant.toString())
        if (seconds == second) {
            out.append(secondText)
        } else {
            val start = out.length
            out.appendSecond(seconds)
            secondText = out.substring(start)
            second = seconds
        }
        return out.appendFraction(instant.nano)
    }
}

/** `yyyy-MM-ddTHH:mm:ss` of [seconds] since the epoch (UTC; years 0000–9999). */
private fun StringBuilder.appendSecond(seconds: Long): StringBuilder {
    val days = Math.floorDiv(seconds, 86_400L)
    val secondOfDay = Math.floorMod(seconds, 86_400L).toInt()
    // Civil date from days since 1970-01-01 (proleptic Gregorian), by 400-year eras starting on March 1st.
    val z = days + 719_468L
    val era = Math.floorDiv(z, 146_097L)
    val dayOfEra = z - era * 146_097L
    val yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    val dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    val mp = (5 * dayOfYear + 2) / 153
    val day = (dayOfYear - (153 * mp + 2) / 5 + 1).toInt()
    val month = (if (mp < 10) mp + 3 else mp - 9).toInt()
    val year = (yearOfEra + era * 400 + if (month <= 2) 1 else 0).toInt()
    digits2(year / 100).digits2(year % 100).append('-')
    digits2(month).append('-')
    digits2(day).append('T')
    digits2(secondOfDay / 3_600).append(':')
    digits2(secondOfDay / 60 % 60).append(':')
    return digits2(secondOfDay % 60)
}

/** The fraction of a second as [Instant.toString] writes it (groups of three digits, none when zero), then `Z`. */
private fun StringBuilder.appendFraction(nanos: Int): StringBuilder {
    when {
        nanos == 0 -> {}
        nanos % 1_000_000 == 0 -> append('.').digits3(nanos / 1_000_000)
        nanos % 1_000 == 0 -> append('.').digits3(nanos / 1_000_000).digits3(nanos / 1_000 % 1_000)
        else -> append('.').digits3(nanos / 1_000_000).digits3(nanos / 1_000 % 1_000).digits3(nanos % 1_000)
    }
    return append('Z')
}

/** Appends [value] (0–99) as two digits. Fixed widths: the divisions are by constants, cheap multiplications. */
private fun StringBuilder.digits2(value: Int): StringBuilder = append('0' + value / 10).append('0' + value % 10)

/** Appends [value] (0–999) as three digits. */
private fun StringBuilder.digits3(value: Int): StringBuilder =
    append('0' + value / 100).append('0' + value / 10 % 10).append('0' + value % 10)
