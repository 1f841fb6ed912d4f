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
    digits(year, 4).append('-')
    digits(month, 2).append('-')
    digits(day, 2).append('T')
    digits(secondOfDay / 3_600, 2).append(':')
    digits(secondOfDay / 60 % 60, 2).append(':')
    digits(secondOfDay % 60, 2)
    val nanos = instant.nano
    when {
        nanos == 0 -> {}
        nanos % 1_000_000 == 0 -> append('.').digits(nanos / 1_000_000, 3)
        nanos % 1_000 == 0 -> append('.').digits(nanos / 1_000, 6)
        else -> append('.').digits(nanos, 9)
    }
    return append('Z')
}

/** Appends [value] (not negative) in decimal, zero-padded to [width] digits. */
private fun StringBuilder.digits(value: Int, width: Int): StringBuilder {
    var divisor = 1
    repeat(width - 1) { divisor *= 10 }
    var rest = value
    while (divisor > 0) {
        append('0' + rest / divisor)
        rest %= divisor
        divisor /= 10
    }
    return this
}
