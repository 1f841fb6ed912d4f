package dev.trellis.springboot

import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.RunQuery
import dev.trellis.runtime.RunControl
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.springframework.boot.health.contributor.Health
import org.springframework.boot.health.contributor.HealthIndicator
import java.time.Duration
import java.time.Instant

/**
 * The `trellis` component of the actuator's health:
 *
 * - **store reachable**: the checkpoint store answers a one-run listing within [timeout] (DOWN with the error
 *   otherwise);
 * - **leases renewing**: no lease renewal of a run of this application failed since that run's last successful
 *   renewal, and no run holds a lease it last claimed or renewed longer than [leaseDuration] ago (its renewals have
 *   stopped: another worker may take the run over). DOWN, naming the run, otherwise;
 * - details: the store, the leases held, the active runs and whether the runs are draining (shutdown).
 *
 * Without a store (`trellis.store.type=none`) only the runs are reported, UP.
 */
internal class TrellisHealthIndicator(
    private val store: CheckpointStore?,
    private val watch: LeaseWatch?,
    private val control: RunControl,
    private val leaseDuration: Duration,
    private val timeout: Duration = Duration.ofSeconds(10),
) : HealthIndicator {
    override fun health(): Health {
        val details = LinkedHashMap<String, Any>()
        details["store"] = store?.toString() ?: "none"
        details["activeRuns"] = control.activeRuns
        details["draining"] = control.isDraining
        if (store == null) return Health.up().withDetails(details).build()
        try {
            runBlocking { withTimeout(timeout.toMillis()) { store.runs(RunQuery(limit = 1)) } }
        } catch (e: Exception) {
            return Health.down(e).withDetails(details)
                .withDetail("problem", "the checkpoint store did not answer")
                .build()
        }
        val leases = watch?.leases.orEmpty()
        details["leasesHeld"] = leases.size
        val failure = watch?.failure
        if (failure != null) {
            return Health.down(failure.error).withDetails(details)
                .withDetail("problem", "renewing the lease of run '${failure.runId}' failed at ${failure.at}")
                .build()
        }
        val now = Instant.now()
        val stale = leases.entries.filter { Duration.between(it.value, now) > leaseDuration }.minByOrNull { it.value }
        if (stale != null) {
            return Health.down().withDetails(details)
                .withDetail(
                    "problem",
                    "the lease of run '${stale.key}' was last renewed at ${stale.value}, longer ago than its " +
                        "duration ($leaseDuration): its renewals have stopped",
                ).build()
        }
        return Health.up().withDetails(details).build()
    }
}
