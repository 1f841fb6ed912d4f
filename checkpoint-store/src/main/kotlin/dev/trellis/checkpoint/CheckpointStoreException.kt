package dev.trellis.checkpoint

import java.time.Duration
import java.time.Instant

/** A [CheckpointStore] operation could not be carried out; the message says why and what to do. */
public open class CheckpointStoreException @JvmOverloads constructor(message: String, cause: Throwable? = null) :
    RuntimeException(message, cause)

/**
 * [CheckpointStore.claim] found [runId] held by another [owner] whose lease runs until [leaseExpiresAt].
 *
 * A claimant that waited for the lease to lapse (a run's `Checkpointing.leaseWait`) and found it renewed all along
 * gets this exception with [waited] set to how long it waited: the owner is alive.
 */
public class RunOwnedException @JvmOverloads constructor(
    /** The run that could not be claimed. */
    public val runId: String,
    /** The owner that asked. */
    public val claimant: String,
    /** The owner holding the live lease. */
    public val owner: String,
    /** When the holder's lease lapses unless renewed. */
    public val leaseExpiresAt: Instant,
    /** How long the claimant waited for the lease to lapse before giving up; zero when it did not wait. */
    public val waited: Duration = Duration.ZERO,
) : CheckpointStoreException(ownedMessage(runId, claimant, owner, leaseExpiresAt, waited))

private fun ownedMessage(runId: String, claimant: String, owner: String, until: Instant, waited: Duration): String =
    if (waited.isZero || waited.isNegative) {
        "Run '$runId' is owned by '$owner' with a lease valid until $until; '$claimant' cannot claim it. " +
            "Only one process may write a run: wait until the lease expires (a crashed owner stops renewing it) or " +
            "is released, then claim again; or run it under the owner id '$owner' if this process replaces it."
    } else {
        "Run '$runId' is still owned by '$owner' (lease valid until $until) after '$claimant' waited $waited for " +
            "the lease to lapse: its owner is alive and renews it. Let that process finish or stop it, or wait " +
            "longer (a larger lease wait); run it under the owner id '$owner' only if this process replaces it."
    }

/**
 * A write with a [Lease] whose epoch is no longer the run's current one: another process took over the run (or the
 * lease was released, or the run deleted). The process holding the stale lease must stop working on the run.
 */
public class FencedOutException(
    /** The run written to. */
    public val runId: String,
    /** The epoch the rejected lease holds. */
    public val heldEpoch: Long,
    /** The run's current epoch, or `null` when the run no longer exists. */
    public val currentEpoch: Long?,
    message: String,
) : CheckpointStoreException(message)

/**
 * [CheckpointStore.append] was given a checkpoint that does not continue the run: its sequence is not the next one,
 * or its parent does not exist. Typically two writers raced, or the caller lost track of the sequence; re-read
 * [CheckpointStore.latest] and continue from there.
 */
public class CheckpointConflictException(
    /** The run written to. */
    public val runId: String,
    /** The sequence the rejected checkpoint had. */
    public val sequence: Long,
    /** The latest sequence stored for the run. */
    public val latestSequence: Long,
    message: String,
) : CheckpointStoreException(message)

/**
 * A stored checkpoint's row cannot be decoded (a corrupt column: its time, kind, metadata or sequence). Thrown by
 * [CheckpointStore.get] and [CheckpointStore.latest] for that checkpoint; [CheckpointStore.history] leaves such a
 * row out, so one bad row does not hide the rest of the run. The message names the run, the sequence and the column.
 */
public class UnreadableCheckpointException @JvmOverloads constructor(
    /** The run the checkpoint belongs to. */
    public val runId: String,
    /** The checkpoint's sequence as stored (its text, since the sequence itself may be what is corrupt). */
    public val sequence: String,
    message: String,
    cause: Throwable? = null,
) : CheckpointStoreException(message, cause)

/**
 * The store could not be reached (a connection lost or reset, a server restarting or failing over, a database file
 * locked by another writer) and stayed unreachable for longer than the store's bound on retrying. This is an
 * infrastructure fault, not the graph's: a run that meets it stops **resumable** — it writes no FAILED checkpoint,
 * everything it appended before stays, and `resume` continues it once the store answers again.
 *
 * The SQLite and PostgreSQL stores throw it after retrying a fault that passes (a lost or reset connection, SQLSTATE
 * class `08`, `57P01`–`57P03`, a deadlock, a locked file…) on fresh connections for their `unavailableAfter` (30 s by
 * default); its message names the run, the store and what to do (`docs/persistence.md`, "The fault model").
 */
public class CheckpointStoreUnavailableException @JvmOverloads constructor(
    /** The store that could not be reached, as its operators know it (e.g. a JDBC URL without credentials). */
    public val store: String,
    /** The operation that gave up, e.g. `append` or `claim`. */
    public val operation: String,
    /** The run the operation was for, when it was for one. */
    public val runId: String?,
    /** How long the store tried before giving up. */
    public val waited: java.time.Duration,
    message: String,
    cause: Throwable? = null,
) : CheckpointStoreException(message, cause)
