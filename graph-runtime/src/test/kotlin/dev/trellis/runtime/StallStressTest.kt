package dev.trellis.runtime

import dev.trellis.graph.InternalTrellisApi
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.internal.execution.StallMonitor
import dev.trellis.runtime.internal.execution.StartCosts
import kotlinx.coroutines.delay
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.time.Duration.Companion.seconds

/**
 * The guarantees of `docs/semantics.md` §10 about which thread starts what: a node believed quick that turns out
 * slow must not hold up work queued behind it (§5: an independent branch never waits for a slow one), and the
 * JVM-wide stall monitor lets go of runs that ended. (Long nodes never start on the caller's thread:
 * `ParallelStartTest`.)
 */
@OptIn(InternalTrellisApi::class)
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class StallStressTest {
    object S : StateSchema("stall-stress") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** Spins (never suspends) until [flag] is set; returns whether it was within [millis]. */
    private fun spinUntil(flag: AtomicBoolean, millis: Long): Boolean {
        val deadline = System.nanoTime() + millis * 1_000_000
        while (!flag.get()) {
            if (System.nanoTime() > deadline) return false
            Thread.onSpinWait()
        }
        return true
    }

    @Test
    fun `work queued after a quick-believed node turned slow is started by another worker`() {
        // entry -> slow, entry -> d -> e. `slow` was quick before (start cost 0) and now spins without suspending until
        // e started. d suspends, so it frees its worker at once; when it finishes, e is queued behind the spinning
        // node: the queue was empty when `slow` started, so nothing watches it for a stall.
        val slowMode = AtomicBoolean(false)
        var eStarted = AtomicBoolean(false)
        val g = graph("late-queue", S) {
            val entry = node("entry") { }
            val slow = node("slow") {
                set(
                    S.log,
                    listOf(
                        if (!slowMode.get()) {
                            "quick"
                        } else if (spinUntil(eStarted, 2_000)) {
                            "overlapped"
                        } else {
                            "held up"
                        },
                    ),
                )
            }
            val d = node("d") { delay(20) }
            val e = node("e") { eStarted.set(true) }
            start(entry)
            entry then slow
            entry then d
            d then e
        }
        Stress.deadline(30.seconds) {
            repeat(3) {
                eStarted = AtomicBoolean(false)
                g.invoke().state[S.log] shouldBeList listOf("quick")
            }
            for (i in 0 until g.topology.size) StartCosts.of(g.topology).set(i, 0)
            slowMode.set(true)
            val outcomes = ArrayList<String>()
            repeat(3) {
                eStarted = AtomicBoolean(false)
                for (i in 0 until g.topology.size) StartCosts.of(g.topology).set(i, 0)
                outcomes += g.invoke().state[S.log].single()
            }
            check(outcomes.all { it == "overlapped" }) {
                "e waited for the slow node to finish (it was queued behind it and no runner started): $outcomes"
            }
        }
    }

    @Test
    fun `the stall monitor lets go of runs once they ended`() {
        val g = graph("monitor-release", S) {
            val entry = node("entry") { }
            val join = node("join") { }
            start(entry)
            for (i in 0 until 16) {
                val branch = node("b$i") { if (i % 3 == 0) Stress.spinMicros(300) }
                entry then branch
                branch then join
            }
        }
        Stress.deadline {
            repeat(200) { g.invoke() }
            val watched = StallMonitor::class.java.getDeclaredField("watched").apply {
                isAccessible = true
            }.get(StallMonitor) as Collection<*>
            // The monitor looks every millisecond; on a loaded machine its thread may wait long for a core.
            val deadline = System.nanoTime() + 10_000_000_000L
            while (watched.isNotEmpty() && System.nanoTime() < deadline) delay(1)
            check(watched.isEmpty()) { "the stall monitor still holds ${watched.size} ended runs" }
        }
    }

    private infix fun <T> List<T>.shouldBeList(expected: List<T>) = check(this == expected) { "$this != $expected" }
}
