package dev.trellis.runtime.persistence

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.graph.Reducer
import dev.trellis.graph.StateSchema
import dev.trellis.graph.graph
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.RunOptions
import dev.trellis.runtime.Status
import dev.trellis.runtime.invoke
import dev.trellis.runtime.resume
import dev.trellis.runtime.resumeEvents
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.comparables.shouldBeGreaterThanOrEqualTo
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.TestCoroutineScheduler
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.time.ZoneId
import java.time.ZoneOffset
import java.util.concurrent.CopyOnWriteArrayList

/**
 * `Checkpointing.leaseWait` (`docs/persistence.md`, "Resuming after a crash"): a resume waits for the lease of an owner
 * that stopped renewing (a crashed process) to lapse, then takes the run over — never before it lapsed — and gives
 * up with [RunOwnedException] naming the owner and the wait when the owner keeps renewing. In virtual time on the
 * in-memory store (its clock is the test scheduler's), with a real short lease on SQLite and PostgreSQL.
 */
class LeaseWaitTest {
    object Doc : StateSchema("lease-wait") {
        val log = key("log", default = emptyList<String>(), reducer = Reducer.append())
    }

    /** When `approve` ran, by the run's clock; it must never be before the other owner's lease lapsed. */
    private val approvedAt = CopyOnWriteArrayList<Instant>()

    private fun review(clock: Clock) = graph("lease-wait", Doc) {
        val write = node("write") { set(Doc.log, listOf("draft")) }
        val approve = node("approve") {
            val answer = interrupt("Send it?")
            approvedAt += clock.instant()
            set(Doc.log, listOf("approved $answer"))
        }
        start(write)
        write then approve
    }

    /** A clock reading the test scheduler's virtual time, counted from the epoch. */
    private class VirtualClock(private val scheduler: TestCoroutineScheduler) : Clock() {
        override fun instant(): Instant = Instant.EPOCH.plusMillis(scheduler.currentTime)

        override fun getZone(): ZoneId = ZoneOffset.UTC

        override fun withZone(zone: ZoneId?): Clock = this
    }

    private fun options(store: CheckpointStore, clock: Clock, wait: Duration, runId: String? = null): RunOptions {
        val checkpointing = Checkpointing(store, owner = "resumer", leaseWait = wait)
        return RunOptions(runId = runId, clock = clock, checkpointing = checkpointing)
    }

    @Test
    fun `a resume waits until a crashed owner's lease lapsed, then takes the run over (virtual time)`() = runTest {
        val clock = VirtualClock(testScheduler)
        val store = InMemoryCheckpointStore(clock, Duration.ofSeconds(30))
        val graph = review(clock)
        graph.invoke(options = options(store, clock, Duration.ZERO, "r1")).status shouldBe Status.INTERRUPTED
        // A process resumed it and crashed: its lease stays until it lapses, nobody renews it.
        val dead = store.claim("r1", "crashed-worker")

        val refused = shouldThrow<RunOwnedException> { graph.resume("r1", options(store, clock, Duration.ZERO), "yes") }
        refused.owner shouldBe "crashed-worker"
        refused.waited shouldBe Duration.ZERO

        val started = testScheduler.currentTime
        val done = graph.resume("r1", options(store, clock, Duration.ofMinutes(1)), "yes")
        done.status shouldBe Status.COMPLETED
        done.state[Doc.log] shouldContainExactly listOf("draft", "approved yes")
        approvedAt.single() shouldBeGreaterThanOrEqualTo dead.expiresAt
        // It waited for the lapse (30 s), not for the whole bound.
        (testScheduler.currentTime - started) shouldBe 30_000L + 10L
        store.runs().single().epoch shouldBe dead.epoch + 1
    }

    @Test
    fun `a resume of a run whose owner keeps renewing gives up after the wait, naming the owner (virtual time)`() =
        runTest {
            val clock = VirtualClock(testScheduler)
            val store = InMemoryCheckpointStore(clock, Duration.ofSeconds(30))
            val graph = review(clock)
            graph.invoke(options = options(store, clock, Duration.ZERO, "r1")).status shouldBe Status.INTERRUPTED
            var live: Lease = store.claim("r1", "live-worker")
            backgroundScope.launch {
                while (true) {
                    delay(10_000)
                    live = store.renew(live)
                }
            }

            val started = testScheduler.currentTime
            val refused = shouldThrow<RunOwnedException> {
                graph.resume("r1", options(store, clock, Duration.ofMinutes(2)), "yes")
            }
            (testScheduler.currentTime - started) shouldBe 120_000L
            refused.owner shouldBe "live-worker"
            refused.claimant shouldBe "resumer"
            refused.waited shouldBe Duration.ofMinutes(2)
            refused.message shouldContain "'live-worker'"
            refused.message shouldContain "waited PT2M"
            approvedAt shouldBe emptyList()
            store.runs().single().owner shouldBe "live-worker"

            // The events of a resume wait the same way and end with the same error.
            val events = shouldThrow<RunOwnedException> {
                graph.resumeEvents("r1", options(store, clock, Duration.ofSeconds(45)), "yes").toList()
            }
            events.waited shouldBe Duration.ofSeconds(45)
        }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `on SQL stores a resume takes over a lapsed lease, never before it lapsed`(backend: Backend): Unit =
        runBlocking {
            SqlDatabase(backend).use { db ->
                val clock = Clock.systemUTC()
                val graph = review(clock)
                val store = db.store()
                graph.invoke(options = options(store, clock, Duration.ZERO, "r1")).status shouldBe Status.INTERRUPTED
                val dead = db.store(leaseDuration = Duration.ofSeconds(2)).claim("r1", "crashed-worker")

                val done = graph.resume("r1", options(db.store(), clock, Duration.ofSeconds(60)), "yes")
                done.status shouldBe Status.COMPLETED
                approvedAt.single() shouldBeGreaterThanOrEqualTo dead.expiresAt
                done.state[Doc.log] shouldContainExactly listOf("draft", "approved yes")
            }
        }

    @ParameterizedTest
    @EnumSource(Backend::class)
    fun `on SQL stores a resume refuses a run whose owner keeps renewing, after the wait`(backend: Backend): Unit =
        runBlocking {
            SqlDatabase(backend).use { db ->
                val clock = Clock.systemUTC()
                val graph = review(clock)
                graph.invoke(options = options(db.store(), clock, Duration.ZERO, "r1")).status shouldBe
                    Status.INTERRUPTED
                val liveStore = db.store(leaseDuration = Duration.ofSeconds(3))
                var live = liveStore.claim("r1", "live-worker")
                val renewing = launch(Dispatchers.IO) {
                    while (isActive) {
                        delay(200)
                        live = liveStore.renew(live)
                    }
                }
                try {
                    val started = System.nanoTime()
                    val refused = shouldThrow<RunOwnedException> {
                        graph.resume("r1", options(db.store(), clock, Duration.ofSeconds(3)), "yes")
                    }
                    Duration.ofNanos(System.nanoTime() - started) shouldBeGreaterThanOrEqualTo Duration.ofSeconds(3)
                    refused.owner shouldBe "live-worker"
                    refused.waited shouldBe Duration.ofSeconds(3)
                    refused.message shouldContain "waited PT3S"
                    approvedAt shouldBe emptyList()
                } finally {
                    renewing.cancel()
                }
            }
        }
}
