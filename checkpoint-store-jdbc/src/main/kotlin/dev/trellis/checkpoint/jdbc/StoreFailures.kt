package dev.trellis.checkpoint.jdbc

import dev.trellis.checkpoint.CheckpointStoreException
import dev.trellis.checkpoint.CheckpointStoreUnavailableException
import java.sql.SQLException
import java.time.Duration

/** A failure of [engine] to [what] that is not a fault that passes: reported at once, never retried. */
internal fun storeFailure(engine: JdbcEngine, what: String, e: SQLException) = CheckpointStoreException(
    "Could not $what in ${engine.description}: ${e.message} (SQL state ${e.sqlState}). Check that the " +
        "database is reachable and writable; the operation was rolled back and may be retried.",
    e,
)

/**
 * The store stayed unavailable: [action] on [runId] met faults that pass for [waited] ([attempts] attempts), the
 * last one [e]. Names the run, the store, what was tried and what to do.
 */
internal fun unavailable(
    engine: JdbcEngine,
    action: String,
    runId: String?,
    e: Exception,
    attempts: Int,
    waited: Duration,
): CheckpointStoreUnavailableException {
    val what = if (runId == null) action else "$action run '$runId'"
    val resumable = if (runId == null) {
        ""
    } else {
        " Nothing the store acknowledged was lost: once it answers again, resume the run (it continues from its " +
            "last stored checkpoint)."
    }
    return CheckpointStoreUnavailableException(
        store = engine.location,
        operation = action,
        runId = runId,
        waited = waited,
        message = "Could not $what in ${engine.description}: it stayed unavailable for " +
            "${TransientFaults.words(waited)} ($attempts attempts, each on a fresh transaction; the last failed with " +
            "${TransientFaults.describe(e)}). ${engine.unavailableAdvice(e)}$resumable To wait longer before giving " +
            "up, raise the store's unavailableAfter.",
        cause = e,
    )
}
