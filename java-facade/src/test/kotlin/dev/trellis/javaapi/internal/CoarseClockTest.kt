package dev.trellis.javaapi.internal

import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import org.junit.jupiter.api.Test
import java.util.concurrent.TimeUnit

/** The clock of the blocked-thread check: it follows `System.nanoTime()`, never ahead of it, lagging by about a tick. */
class CoarseClockTest {
    @Test
    fun `the coarse clock advances with the time and is never ahead of it`() {
        val start = CoarseClock.nanos()
        start shouldBeLessThanOrEqual System.nanoTime()
        val target = start + TimeUnit.MILLISECONDS.toNanos(100)
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30) // generous: the ticker may starve under load
        var now = CoarseClock.nanos()
        while (now < target && System.nanoTime() < deadline) {
            Thread.sleep(CoarseClock.TICK_MILLIS)
            now = CoarseClock.nanos()
        }
        now shouldBeGreaterThanOrEqual target
        CoarseClock.nanos() shouldBeLessThanOrEqual System.nanoTime()
    }
}
