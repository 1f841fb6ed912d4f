package dev.trellis.javaapi.internal

import java.util.concurrent.TimeUnit

/**
 * A clock read for the price of a volatile field, for the blocked-thread check of every Java `node` (two readings per
 * execution). `System.nanoTime()` costs 25 ns on a machine with a TSC clock source, but 150 to 250 ns on the
 * `kvm-clock` of many cloud VMs, which made a Java chain half again as slow as the Kotlin one.
 *
 * A daemon thread, started by the first reading, stores `System.nanoTime()` every [TICK_MILLIS]: readings lag the
 * true time by up to a tick (more while the machine is saturated), so differences are exact to about a tick — enough
 * for a threshold of a second by default.
 */
internal object CoarseClock {
    const val TICK_MILLIS = 10L

    @Volatile
    private var now: Long = System.nanoTime()

    init {
        val ticker = Thread({
            while (true) {
                try {
                    Thread.sleep(TICK_MILLIS)
                } catch (_: InterruptedException) {
                    // nothing stops it but the JVM's end
                }
                now = System.nanoTime()
            }
        }, "trellis-coarse-clock")
        ticker.isDaemon = true
        ticker.start()
    }

    /** The time in nanoseconds, as `System.nanoTime()` gave it at the latest tick. */
    fun nanos(): Long = now

    /** The tick in nanoseconds. */
    val tickNanos: Long = TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS)
}
