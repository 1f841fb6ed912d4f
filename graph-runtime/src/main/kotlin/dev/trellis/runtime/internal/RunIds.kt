package dev.trellis.runtime.internal

import java.util.UUID
import java.util.concurrent.ThreadLocalRandom

/** Random version-4 UUIDs for run ids, from a thread-local source (ids, not secrets). */
internal object RunIds {
    fun next(): String {
        val random = ThreadLocalRandom.current()
        val high = (random.nextLong() and -0xf001L) or 0x4000L
        val low = (random.nextLong() and 0x3fffffffffffffffL) or Long.MIN_VALUE
        return UUID(high, low).toString()
    }
}
