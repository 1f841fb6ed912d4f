package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.InternalStoreApi
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.delay
import java.io.IOException
import java.sql.SQLException
import java.sql.SQLRecoverableException
import java.sql.SQLTransientConnectionException
import java.time.Duration
import java.util.concurrent.ThreadLocalRandom

/**
 * Which database errors pass (`docs/persistence.md`, "The fault model"), and the bounded retry of an operation that
 * met one. An error passes when the connection was lost or reset (SQLSTATE class `08`, an I/O error), the server is
 * shutting down, restarting or not yet accepting connections (`57P01`, `57P02`, `57P03`), the session was ended for
 * idling inside a transaction (`25P03`), the database rolled the transaction back to break a deadlock or a
 * serialization conflict (`40001`, `40P01`), or a row lock was not granted within the lock timeout (`55P03`: its
 * holder is frozen or cut off, and the server ends its session). Everything else — a constraint, fencing, a
 * statement timeout, bad SQL — is a real answer and is never retried.
 */
@InternalStoreApi
public object TransientFaults {
    /** The store's default bound on retrying: how long a store stays unavailable before it gives up. */
    @JvmField
    public val DEFAULT_UNAVAILABLE_AFTER: Duration = Duration.ofSeconds(30)

    private val PASSING_STATES = setOf("57P01", "57P02", "57P03", "25P03", "40001", "40P01", "55P03")
    private const val FIRST_DELAY_MILLIS = 25L
    private const val MAX_DELAY_MILLIS = 2_000L

    /** Whether [e], or an error it chains to, is one that passes (see [TransientFaults]). */
    public fun isTransient(e: Throwable): Boolean {
        var cause: Throwable? = e
        var depth = 0
        while (cause != null && depth++ < MAX_DEPTH) {
            if (cause is SQLTransientConnectionException || cause is SQLRecoverableException || cause is IOException) {
                return true
            }
            if (cause is SQLException) {
                val state = cause.sqlState
                if (state != null && (state.startsWith("08") || state in PASSING_STATES)) return true
                cause.nextException?.let { if (it !== cause && isTransient(it)) return true }
            }
            cause = cause.cause
        }
        return false
    }

    /** Checks [unavailableAfter] as given to a store's constructor. */
    public fun requireBound(unavailableAfter: Duration) {
        require(!unavailableAfter.isNegative && unavailableAfter.toMillis() in 0..Int.MAX_VALUE) {
            "unavailableAfter must be between 0 and ${Int.MAX_VALUE} ms, but is $unavailableAfter; pass for example " +
                "Duration.ofSeconds(30) (0 reports the first transient error at once)."
        }
    }

    /**
     * Runs [attempt] again, for an operation whose first attempt ran already and failed with [failure], an error that
     * passes (the caller tries once with nothing around it and pays for the retry's bookkeeping only when that attempt
     * fails), until it returns or throws an error that does not pass ([isTransient], rethrown as is), waiting between
     * attempts with an exponential backoff (25 ms doubling up to 2 s, jittered). The next attempt (number 2) comes
     * after the first pause; the bound counts from this call. An attempt that fails with a passing error after
     * [unavailableAfter] has gone by is the last: [giveUp] turns its error into what is thrown. [attempt] is told its
     * number, so that a retry can first reconcile what an attempt whose answer was lost may have done.
     */
    public suspend fun <T> retryingAfter(
        failure: Exception,
        unavailableAfter: Duration,
        isTransient: (Throwable) -> Boolean,
        giveUp: (failure: Exception, attempts: Int, waited: Duration) -> Exception,
        attempt: suspend (number: Int) -> T,
    ): T {
        val backoff = Backoff(unavailableAfter)
        delay(backoff.next(failure, giveUp))
        return retryLoop(backoff, isTransient, giveUp, attempt)
    }

    private suspend fun <T> retryLoop(
        backoff: Backoff,
        isTransient: (Throwable) -> Boolean,
        giveUp: (failure: Exception, attempts: Int, waited: Duration) -> Exception,
        attempt: suspend (number: Int) -> T,
    ): T {
        while (true) {
            try {
                return attempt(backoff.number)
            } catch (e: Exception) {
                if (e is CancellationException || !isTransient(e)) throw e
                delay(backoff.next(e, giveUp))
            }
        }
    }

    /**
     * The same retries for blocking code, running every attempt (the first too) on the calling thread: it sleeps
     * between attempts.
     */
    public fun <T> retryingBlocking(
        unavailableAfter: Duration,
        giveUp: (failure: Exception, attempts: Int, waited: Duration) -> Exception,
        attempt: (number: Int) -> T,
    ): T {
        val backoff = Backoff(unavailableAfter)
        while (true) {
            try {
                return attempt(backoff.number)
            } catch (e: Exception) {
                if (e is InterruptedException || !isTransient(e)) throw e
                Thread.sleep(backoff.next(e, giveUp))
            }
        }
    }

    /**
     * The schedule of [retryingAfter] and [retryingBlocking]: the attempt [number], and the pause before the next one
     * (25 ms doubling up to 2 s, jittered, never past the bound), or [giveUp]'s error once [unavailableAfter] is spent.
     */
    private class Backoff(unavailableAfter: Duration) {
        private val started = System.nanoTime()
        private val bound = unavailableAfter.toNanos()
        private var pause = FIRST_DELAY_MILLIS
        var number = 1
            private set

        fun next(failure: Exception, giveUp: (failure: Exception, attempts: Int, waited: Duration) -> Exception): Long {
            val waited = System.nanoTime() - started
            if (waited >= bound) throw giveUp(failure, number, Duration.ofNanos(waited))
            val millis = jittered(pause).coerceAtMost((bound - waited) / 1_000_000 + 1)
            pause = (pause * 2).coerceAtMost(MAX_DELAY_MILLIS)
            number++
            return millis
        }
    }

    /** [Duration] in words for messages: `850 ms`, `30 s`. */
    public fun words(duration: Duration): String =
        if (duration.toMillis() < 10_000) "${duration.toMillis()} ms" else "${duration.seconds} s"

    /** The SQL state and message of [e] for an error message. */
    public fun describe(e: Throwable): String {
        val state = (e as? SQLException)?.sqlState
        return (e.message ?: e.toString()) + if (state != null) " (SQL state $state)" else ""
    }

    private fun jittered(millis: Long): Long = millis / 2 + ThreadLocalRandom.current().nextLong(millis / 2 + 1)

    private const val MAX_DEPTH = 16
}
