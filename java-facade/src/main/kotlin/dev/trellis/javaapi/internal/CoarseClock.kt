package dev.trellis.javaapi.internal

/**
 * A clock read for the price of a volatile field, for the blocked-thread check of every Java `node` (two readings per
 * execution). `System.nanoTime()` cost 175 to 245 ns a call on the `kvm-clock` VMs this project is measured on, which
 * made a Java chain half again as slow as the Kotlin one (bench/HISTORY.md).
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
}
