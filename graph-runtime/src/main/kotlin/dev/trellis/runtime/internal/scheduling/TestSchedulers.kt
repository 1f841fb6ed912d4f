package dev.trellis.runtime.internal.scheduling

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.test.TestCoroutineScheduler
import kotlinx.coroutines.test.TestDispatcher
import java.time.Clock
import java.time.Instant
import java.time.ZoneId
import java.time.ZoneOffset
import kotlin.coroutines.ContinuationInterceptor
import kotlin.time.TimeSource

/**
 * What a run takes from kotlinx-coroutines-test when it runs under a test scheduler (`runTest`): the test
 * dispatcher, its virtual time, and a clock of that virtual time.
 *
 * The library is an optional dependency of this module (users who test with `runTest` have it; nobody else needs
 * it): this object only checks whether it is on the class path, and every reference to its types lives in
 * [TestTypes], a class that is loaded only when it is. A version of the library too old for what [TestTypes] calls
 * (before 1.7) counts as absent.
 */
internal object TestSchedulers {
    private val available: Boolean = try {
        Class.forName("kotlinx.coroutines.test.TestDispatcher", false, TestSchedulers::class.java.classLoader)
        TestTypes.check()
        true
    } catch (_: ClassNotFoundException) {
        false
    } catch (_: LinkageError) {
        false
    }

    /** [interceptor] when it is a kotlinx-coroutines-test `TestDispatcher`, else null. */
    fun testDispatcher(interceptor: ContinuationInterceptor?): CoroutineDispatcher? =
        if (available && interceptor != null) TestTypes.asTestDispatcher(interceptor) else null

    /** The virtual time source of the scheduler of [testDispatcher] (one [testDispatcher] returned). */
    fun timeSource(testDispatcher: CoroutineDispatcher): TimeSource = TestTypes.timeSource(testDispatcher)

    /** A UTC clock that reads the virtual time of [testDispatcher]'s scheduler, counted from the epoch. */
    fun clock(testDispatcher: CoroutineDispatcher): Clock = TestTypes.clock(testDispatcher)
}

/** The only code that names kotlinx-coroutines-test types; loaded once the library is known to be there. */
private object TestTypes {
    /** Resolves what the other members call, so that a too-old library fails here, once, and counts as absent. */
    fun check() {
        TestCoroutineScheduler::class.java.getMethod("getTimeSource")
        TestCoroutineScheduler::class.java.getMethod("getCurrentTime")
        TestDispatcher::class.java.getMethod("getScheduler")
    }

    fun asTestDispatcher(interceptor: ContinuationInterceptor): CoroutineDispatcher? = interceptor as? TestDispatcher

    fun timeSource(testDispatcher: CoroutineDispatcher): TimeSource =
        (testDispatcher as TestDispatcher).scheduler.timeSource

    fun clock(testDispatcher: CoroutineDispatcher): Clock = VirtualClock(
        (testDispatcher as TestDispatcher).scheduler,
        ZoneOffset.UTC,
    )
}

/**
 * The virtual time of a test scheduler as a [Clock]: `1970-01-01T00:00:00Z` plus the scheduler's current time, so that
 * event timestamps move with `delay` and are the same from one test run to the next.
 */
private class VirtualClock(private val scheduler: TestCoroutineScheduler, private val zone: ZoneId) : Clock() {
    @OptIn(ExperimentalCoroutinesApi::class)
    override fun millis(): Long = scheduler.currentTime

    override fun instant(): Instant = Instant.ofEpochMilli(millis())

    override fun getZone(): ZoneId = zone

    override fun withZone(zone: ZoneId): Clock = if (zone == this.zone) this else VirtualClock(scheduler, zone)

    override fun toString(): String = "VirtualClock[$zone, ${instant()}]"
}
