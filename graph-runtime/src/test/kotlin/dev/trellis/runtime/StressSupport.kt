package dev.trellis.runtime

import dev.trellis.graph.NodeScope
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/**
 * Helpers of the stress tests of the runtime's workers and drive right (`internal/scheduling/DriveRight.kt`): real threads
 * (`Dispatchers.Default`, no `RunOptions.dispatcher`), many repetitions, and a deadline on everything so that a
 * lost wake-up fails the test instead of hanging the build.
 */
object Stress {
    /** What a branch does: some never suspend (started and finished by the worker that polls them), some do. */
    enum class Kind { QUICK, SPIN, LONG_SPIN, YIELD, DELAY, EMIT }

    /** Every kind. */
    val kinds: List<Kind> = Kind.entries

    /**
     * Spins (never suspends) until [count] reaches [target], or fails with [what] after [limitMillis]: how a branch
     * that must not suspend waits for its siblings to start beside it.
     */
    fun spinUntil(count: AtomicInteger, target: Int, what: String, limitMillis: Long = 20_000) {
        val deadline = System.nanoTime() + limitMillis * 1_000_000
        while (count.get() < target) {
            check(System.nanoTime() < deadline) { what }
            Thread.onSpinWait()
        }
    }

    fun spinMicros(micros: Long) {
        val end = System.nanoTime() + micros * 1_000
        while (System.nanoTime() < end) Thread.onSpinWait()
    }

    /** Performs [kind] in a node body. */
    suspend fun NodeScope.perform(kind: Kind, random: Random = Random) {
        when (kind) {
            Kind.QUICK -> Unit
            Kind.SPIN -> spinMicros(random.nextLong(5, 200))
            Kind.LONG_SPIN -> spinMicros(random.nextLong(500, 2_000))
            Kind.YIELD -> yield()
            Kind.DELAY -> delay(random.nextLong(0, 3))
            Kind.EMIT -> emit("custom")
        }
    }

    /**
     * Runs [block] in runBlocking and fails when it makes no progress for [limit]: a run that never ends fails with the
     * [what] it was doing (the failure cancels the run, which must end then; JUnit's own @Timeout catches the rest).
     * [what] names the current step (`"rep 17, plan ..."`): each change of it counts as progress and restarts the
     * deadline, so a loop of many steps on a loaded machine is not mistaken for a hang; a constant [what] makes
     * [limit] a deadline for the whole block.
     */
    fun deadline(limit: Duration = 20.seconds, what: () -> String = { "" }, block: suspend CoroutineScope.() -> Unit) {
        runBlocking {
            val work = async { block() }
            var step = what()
            var since = TimeSource.Monotonic.markNow()
            while (withTimeoutOrNull(50.milliseconds) { work.join() } == null) {
                val now = what()
                if (now != step) {
                    step = now
                    since = TimeSource.Monotonic.markNow()
                } else if (since.elapsedNow() > limit) {
                    work.cancel()
                    throw AssertionError("Hang: nothing ended within $limit. $now")
                }
            }
            work.await()
        }
    }

    /** Waits (real time) until the job's children ended, or fails naming those still active. */
    suspend fun awaitNoActiveChildren(job: Job, limit: Duration = 5.seconds) {
        try {
            withTimeout(limit) { for (child in job.children.toList()) child.join() }
        } catch (e: TimeoutCancellationException) {
            throw AssertionError(
                "Leak: children still active after $limit: ${job.children.filter { it.isActive }.toList()}",
                e,
            )
        }
    }

    /** Counts node bodies inside their body: after a run returned, none may still be running (no leaked coroutine). */
    class Bodies {
        val entered = AtomicInteger()
        val exited = AtomicInteger()
        val inside = AtomicInteger()
        val maxInside = AtomicInteger()

        suspend inline fun <T> track(block: () -> T): T {
            entered.incrementAndGet()
            val now = inside.incrementAndGet()
            maxInside.accumulateAndGet(now, ::maxOf)
            try {
                return block()
            } finally {
                inside.decrementAndGet()
                exited.incrementAndGet()
            }
        }

        fun checkAllExited(context: String) {
            check(entered.get() == exited.get()) {
                "$context: ${entered.get() - exited.get()} node bodies still running after the run returned"
            }
        }
    }
}

/** A list of the run's node statuses still EXECUTING: never allowed once a run returned. */
fun RunResult.executing(): List<String> = nodes.values.filter { it.status == Status.EXECUTING }.map { it.nodeId }
