package dev.trellis.springboot

import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.InMemoryCheckpointStore
import dev.trellis.checkpoint.postgres.PostgresCheckpointStore
import dev.trellis.runtime.RunControl
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.postgresql.ds.PGSimpleDataSource
import org.springframework.boot.health.contributor.Status
import java.time.Duration

class TrellisHealthIndicatorTest {
    private val lease = Duration.ofSeconds(30)

    @Test
    fun `a reachable store with no lease held is UP`() {
        val watch = LeaseWatch(InMemoryCheckpointStore())
        val health = TrellisHealthIndicator(watch, watch, RunControl(), lease).health()
        health.status shouldBe Status.UP
        health.details["leasesHeld"] shouldBe 0
        health.details["activeRuns"] shouldBe 0
        health.details["draining"] shouldBe false
    }

    @Test
    fun `a failed lease renewal is DOWN naming the run, until the run renews or releases again`(): Unit = runBlocking {
        val store = InMemoryCheckpointStore()
        val watch = LeaseWatch(store)
        val first = watch.claim("run-1", "worker-a")
        store.claim("run-1", "worker-a") // claimed again (a restarted worker): the first lease is fenced out
        (runCatching { watch.renew(first) }.exceptionOrNull() is FencedOutException) shouldBe true

        val down = TrellisHealthIndicator(watch, watch, RunControl(), lease).health()
        down.status shouldBe Status.DOWN
        (down.details["problem"] as String) shouldStartWith "renewing the lease of run 'run-1' failed at"

        watch.release(first)
        TrellisHealthIndicator(watch, watch, RunControl(), lease).health().status shouldBe Status.UP
    }

    @Test
    fun `a lease not renewed for longer than its duration is DOWN`(): Unit = runBlocking {
        val watch = LeaseWatch(InMemoryCheckpointStore())
        watch.claim("run-2", "worker-a")
        val health = TrellisHealthIndicator(watch, watch, RunControl(), Duration.ZERO).health()
        health.status shouldBe Status.DOWN
        health.details["leasesHeld"] shouldBe 1
        (health.details["problem"] as String) shouldContain "the lease of run 'run-2' was last renewed at"
    }

    @Test
    fun `an unreachable store is DOWN`() {
        val nowhere = PGSimpleDataSource().apply {
            setURL("jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1")
        }
        val store = PostgresCheckpointStore(nowhere, "trellis_unreachable", unavailableAfter = Duration.ZERO)
        val health = TrellisHealthIndicator(store, null, RunControl(), lease, Duration.ofSeconds(5)).health()
        health.status shouldBe Status.DOWN
        health.details["problem"] shouldBe "the checkpoint store did not answer"
    }
}
