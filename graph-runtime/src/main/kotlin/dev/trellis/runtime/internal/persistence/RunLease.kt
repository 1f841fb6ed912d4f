package dev.trellis.runtime.internal.persistence

import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunOwnedException
import dev.trellis.runtime.Checkpointing
import dev.trellis.runtime.internal.rethrowIfFatal
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.util.concurrent.atomic.AtomicReference

/**
 * The lease of one checkpointed run (`docs/persistence.md`, leases): claimed from the store when the run starts,
 * renewed at half its remaining time while the run lasts, released when it ends. Only the holder of the lease may
 * append the run's checkpoints; a store that sees another process's newer lease refuses them ([FencedOutException]).
 *
 * A run in real time is renewed by [LeaseRenewal]'s one thread ([renewOnce] when [renewalDue]); a run in virtual time
 * renews its own lease on its scheduler ([keepAlive]). A child run has no lease: it writes through its parent.
 */
internal class RunLease(private val runId: String, private val config: Checkpointing, private val clock: Clock) {
    /** The lease held now; null before the claim and after the release. */
    private val held = AtomicReference<Lease?>()

    /** The lease the run writes with; null before the claim and after the release. */
    val current: Lease? get() = held.get()

    /**
     * When (`System.nanoTime`) the lease is due for renewal while [LeaseRenewal] holds the run: at half its remaining
     * time, at least 50 ms on; [Long.MAX_VALUE] while a renewal is under way or after the renewals ended.
     */
    @Volatile
    var renewalDue: Long = Long.MAX_VALUE

    /** Claims the run's lease; with [timedRenewal] (a run in real time), [LeaseRenewal] renews it until [release]. */
    suspend fun claim(timedRenewal: Boolean) {
        val claimed = claimWaiting()
        held.set(claimed)
        if (timedRenewal && !neverLapses(claimed)) {
            val interval = renewalInterval(claimed)
            renewalDue = System.nanoTime() + interval
            LeaseRenewal.hold(this, interval)
        }
    }

    /**
     * Claims the run, waiting up to [Checkpointing.leaseWait] in all for a lease another owner holds to lapse
     * (`docs/persistence.md`, "Resuming after a crash"): after each refusal it waits until the holder's lease expires
     * by [clock] (at least [MIN_CLAIM_RETRY_MILLIS], at most what is left of the wait) and claims again. The store
     * judges every claim, so the run is never taken before the lease lapsed. When the wait is used up the last refusal
     * is rethrown with the wait it outlasted ([RunOwnedException.waited]). Counting the wait by the pauses taken, not
     * by a clock, ends it even under a clock that does not move.
     */
    private suspend fun claimWaiting(): Lease {
        var left = config.leaseWait.toMillis()
        while (true) {
            try {
                return config.store.claim(runId, config.owner)
            } catch (e: RunOwnedException) {
                if (config.leaseWait.isZero) throw e
                if (left <= 0) {
                    throw RunOwnedException(e.runId, e.claimant, e.owner, e.leaseExpiresAt, config.leaseWait)
                }
                val untilLapse = Duration.between(Instant.now(clock), e.leaseExpiresAt).toMillis() + LAPSE_MARGIN_MILLIS
                val pause = minOf(maxOf(untilLapse, MIN_CLAIM_RETRY_MILLIS), left)
                delay(pause)
                left -= pause
            }
        }
    }

    /** Stops the renewals and releases the lease, once; a failure to release is ignored (the lease then expires). */
    suspend fun release() {
        LeaseRenewal.drop(this)
        val lease = held.getAndSet(null) ?: return
        try {
            config.store.release(lease)
        } catch (e: Throwable) {
            e.rethrowIfFatal(currentCoroutineContext())
        }
    }

    /**
     * Renews the lease at half its remaining time, for as long as the run lasts: for a run in virtual time, in the
     * run's own context (its scheduler's delays); a run in real time is renewed by [LeaseRenewal].
     */
    suspend fun keepAlive() {
        val lease = held.get() ?: return
        if (neverLapses(lease)) return
        var wait = renewalInterval(lease)
        while (true) {
            delay(wait / 1_000_000)
            wait = renewAndPlan()
            if (wait < 0) return
        }
    }

    /**
     * Whether [lease] is granted until the far future (as the store in a Temporal workflow's memory grants): it is
     * then never renewed — in a workflow, a renewal's timer would be a command of its history.
     */
    private fun neverLapses(lease: Lease): Boolean =
        Duration.between(Instant.now(clock), lease.expiresAt).toDays() >= NEVER_LAPSES_DAYS

    /** One renewal for [LeaseRenewal], which is told when the next one is due (unless the renewals ended). */
    suspend fun renewOnce() {
        val next = renewAndPlan()
        if (next < 0) return
        renewalDue = System.nanoTime() + next
        LeaseRenewal.due(this)
    }

    /**
     * Renews the lease once and returns the nanoseconds until the next renewal, or -1 when the renewals end. A
     * renewal that fails for a reason that may pass (the store busy or unreachable) is tried again after
     * [RENEWAL_RETRY_NANOS], for as long as the run holds its lease; one refused because another process took the
     * run over ([FencedOutException]) ends the renewals, and the next save fails with that error.
     */
    private suspend fun renewAndPlan(): Long =
        try {
            if (renew()) held.get()?.let { renewalInterval(it) } ?: -1 else -1
        } catch (e: Throwable) {
            e.rethrowIfFatal(currentCoroutineContext())
            if (e is FencedOutException || held.get() == null) -1 else RENEWAL_RETRY_NANOS
        }

    /**
     * Renews the lease held now; false when there is none (the run released it). A lease released while the renewal
     * was under way stays released: the renewed one is dropped.
     */
    private suspend fun renew(): Boolean {
        val lease = held.get() ?: return false
        val renewed = config.store.renew(lease)
        return held.compareAndSet(lease, renewed)
    }

    /**
     * How long from now to renew [lease] (nanoseconds): half its remaining time by [clock], at least 50 ms (and at
     * most [MAX_RENEWAL_SECONDS], so that a lease of centuries does not overflow the nanoseconds).
     */
    private fun renewalInterval(lease: Lease): Long {
        val left = Duration.between(Instant.now(clock), lease.expiresAt)
        if (left.seconds / 2 >= MAX_RENEWAL_SECONDS) return MAX_RENEWAL_SECONDS * 1_000_000_000L
        if (left.isNegative) return MIN_RENEWAL_NANOS
        return maxOf(left.toNanos() / 2, MIN_RENEWAL_NANOS)
    }
}

/** A lease granted for this many days or more never lapses in practice, and is not renewed: 100 years. */
private const val NEVER_LAPSES_DAYS = 36_500L

/** How often, at most, a claim waiting for another owner's lease to lapse tries again: every 50 ms. */
private const val MIN_CLAIM_RETRY_MILLIS = 50L

/** How long after the holder's lease expires (by the run's clock) a waiting claim tries again: 10 ms. */
private const val LAPSE_MARGIN_MILLIS = 10L

/** How soon a renewal that failed for a reason that may pass is tried again: 250 ms. */
private const val RENEWAL_RETRY_NANOS = 250_000_000L

/** The shortest wait before a lease is renewed: 50 ms. */
private const val MIN_RENEWAL_NANOS = 50_000_000L

/** The longest wait before a lease is renewed (about 31 years): longer would overflow `System.nanoTime` sums. */
private const val MAX_RENEWAL_SECONDS = 1_000_000_000L
