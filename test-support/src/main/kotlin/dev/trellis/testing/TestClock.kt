package dev.trellis.testing

import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.time.ZoneId
import java.time.ZoneOffset

/**
 * A clock the test moves by hand, so lease expiry and other deadlines are tested without sleeping.
 *
 * It starts at [now] (2026-01-01T00:00:00Z unless given) in UTC and moves only when the test calls [advance] or
 * sets [now]; reads and writes are safe from any thread.
 */
public class TestClock(
    /** The instant the clock reads. */
    @Volatile public var now: Instant = Instant.parse("2026-01-01T00:00:00Z"),
) : Clock() {
    /** Moves the clock forward by [duration]. */
    public fun advance(duration: Duration) {
        now = now.plus(duration)
    }

    override fun getZone(): ZoneId = ZoneOffset.UTC

    override fun withZone(zone: ZoneId?): Clock = this

    override fun instant(): Instant = now
}
