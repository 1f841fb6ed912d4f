package dev.trellis.checkpoint.internal

import dev.trellis.checkpoint.CheckpointConflictException
import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.FencedOutException
import dev.trellis.checkpoint.InternalStoreApi
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunInfo
import dev.trellis.checkpoint.RunOwnedException
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.time.temporal.ChronoUnit

/**
 * The lease and sequence bookkeeping of one run, as every store keeps it (a row of the runs table).
 *
 * Shared by the in-memory store and the SQL stores of the other checkpoint-store modules; not for applications.
 */
@InternalStoreApi
public class RunRow(
    /** The run's id. */
    public val runId: String,
    /** The graph of the latest checkpoint, or `null` while the run has none. */
    public val graphId: String?,
    /** The owner of the current lease, or `null` when nobody holds it. */
    public val owner: String?,
    /** When the current lease lapses, or `null` when nobody holds it. */
    public val leaseUntil: Instant?,
    /** The run's current fencing version (0 before the first claim). */
    public val epoch: Long,
    /** The sequence of the latest checkpoint, 0 while the run has none. */
    public val latestSequence: Long,
    /** The status recorded with the latest checkpoint, or `null` while the run has none. */
    public val latestStatus: String?,
    /** When the store first recorded the run, or `null` when unknown (a row from before stores recorded it). */
    public val createdAt: Instant? = null,
) {
    /** This row as the public [RunInfo]. */
    public fun toInfo(): RunInfo =
        RunInfo(runId, graphId, owner, leaseUntil, epoch, latestSequence, latestStatus, createdAt)
}

/** The part of a checkpoint that pruning looks at. Shared by the stores; not for applications. */
@InternalStoreApi
public class PruneEntry(
    /** The checkpoint's sequence. */
    public val sequence: Long,
    /** The checkpoint it continues, or `null`. */
    public val parentSequence: Long?,
    /** Whether it is a full snapshot or a delta on its parent. */
    public val kind: CheckpointRecord.Kind,
)

/**
 * The rules every [dev.trellis.checkpoint.CheckpointStore] applies, so that all stores behave alike: the in-memory
 * store here and the SQL stores of the other checkpoint-store modules. Not for applications.
 */
@InternalStoreApi
public object StoreRules {
    /**
     * [dev.trellis.checkpoint.RunQuery.Order.NEWEST_FIRST] as a comparator: creation time descending (unknown
     * last), then run id descending.
     */
    public val newestFirst: Comparator<RunInfo> =
        compareByDescending<RunInfo, Instant?>(nullsFirst()) { it.createdAt }.thenByDescending { it.runId }

    /** The refusal of a newest-first page after run [runId], which is not in the store. */
    public fun unknownCursor(runId: String): String =
        "No run '$runId' to list newest-first runs after: it was deleted since the previous page was read. " +
            "Start again from the first page."

    /** Store times are kept to the millisecond, the precision of the SQL columns. */
    public fun now(clock: Clock): Instant = clock.instant().truncatedTo(ChronoUnit.MILLIS)

    /** When a lease granted or renewed now lapses. */
    public fun leaseUntil(clock: Clock, leaseDuration: Duration): Instant = now(clock).plus(leaseDuration)

    /** Refuses a lease duration below 1 ms. */
    public fun requireLeaseDuration(leaseDuration: Duration) {
        require(!leaseDuration.isNegative && !leaseDuration.isZero && leaseDuration >= Duration.ofMillis(1)) {
            "The lease duration must be at least 1 ms, but is $leaseDuration; pass for example Duration.ofSeconds(30)."
        }
    }

    /** The longest run id or owner a store accepts, in UTF-16 characters. */
    public const val MAX_ID_LENGTH: Int = 256

    /**
     * Refuses a run id outside the policy every store applies (`docs/persistence-stores.md`): not blank, at most
     * [MAX_ID_LENGTH] characters, no NUL character (PostgreSQL cannot store it) and no unpaired
     * surrogates (they cannot be encoded, so two distinct ids would be stored as the same text). The message quotes
     * at most the start of the id.
     */
    public fun requireRunId(runId: String) {
        requireId(runId, "run id", "the id of the run")
    }

    /** Refuses an owner outside the same policy as run ids ([requireRunId]). */
    public fun requireOwner(owner: String) {
        requireId(
            owner,
            "owner",
            "an id unique to this process, for example host name + process id + a random suffix",
        )
    }

    private fun requireId(id: String, what: String, hint: String) {
        require(id.isNotBlank()) { "The $what is blank; pass $hint." }
        require(id.length <= MAX_ID_LENGTH) {
            "The $what ${quote(id)} has ${id.length} characters, more than the $MAX_ID_LENGTH a store accepts; " +
                "pass $hint of at most $MAX_ID_LENGTH characters (a hash of a longer key, say)."
        }
        var i = 0
        while (i < id.length) {
            val c = id[i]
            val problem = when {
                c == '\u0000' -> "a NUL character (U+0000), which PostgreSQL cannot store"
                Character.isHighSurrogate(c) && i + 1 < id.length && Character.isLowSurrogate(id[i + 1]) -> {
                    i++
                    null
                }
                Character.isSurrogate(c) -> "an unpaired surrogate (U+%04X), which no database can store".format(c.code)
                else -> null
            }
            require(problem == null) {
                "The $what ${quote(id)} holds $problem at index $i; pass $hint without it."
            }
            i++
        }
    }

    /** [id] for a message: at most its first 64 characters, control characters and surrogates escaped. */
    public fun quote(id: String): String {
        val shown = StringBuilder("'")
        for (c in id.take(64)) {
            val escaped = Character.isISOControl(c) || Character.isSurrogate(c)
            if (escaped) shown.append("\\u%04X".format(c.code)) else shown.append(c)
        }
        shown.append('\'')
        if (id.length > 64) shown.append("… (").append(id.length).append(" characters)")
        return shown.toString()
    }

    /** Throws [RunOwnedException] when another owner than [owner] holds a lease on [row] that has not expired. */
    public fun checkClaim(runId: String, owner: String, row: RunRow, now: Instant) {
        val holder = row.owner
        val until = row.leaseUntil
        if (holder != null && holder != owner && until != null && until.isAfter(now)) {
            throw RunOwnedException(runId, owner, holder, until)
        }
    }

    /** Throws [FencedOutException] unless [lease] still holds [row]'s current epoch. */
    public fun checkWritable(lease: Lease, row: RunRow?) {
        if (row == null) {
            throw FencedOutException(
                lease.runId,
                lease.epoch,
                null,
                "Run '${lease.runId}' no longer exists (it was deleted); this process ('${lease.owner}') holds " +
                    "epoch ${lease.epoch} and must stop writing it. Claim the run again to start it anew.",
            )
        }
        if (row.epoch != lease.epoch && row.owner == null) {
            throw FencedOutException(
                lease.runId,
                lease.epoch,
                row.epoch,
                "Another process took over run '${lease.runId}' at epoch ${row.epoch} and has since released it; " +
                    "this process ('${lease.owner}') holds epoch ${lease.epoch} and must stop: its writes would " +
                    "overwrite newer checkpoints. Resume the run to continue from its latest checkpoint; renew " +
                    "leases well before they expire (the lease ran until ${lease.expiresAt}).",
            )
        }
        if (row.epoch != lease.epoch) {
            throw FencedOutException(
                lease.runId,
                lease.epoch,
                row.epoch,
                "Another process ('${row.owner}') took over run '${lease.runId}' at epoch ${row.epoch}; this process " +
                    "('${lease.owner}') holds epoch ${lease.epoch} and must stop: its writes would overwrite newer " +
                    "checkpoints. Renew leases well before they expire (the lease ran until ${lease.expiresAt}).",
            )
        }
        if (row.owner != lease.owner) {
            throw FencedOutException(
                lease.runId,
                lease.epoch,
                row.epoch,
                "The lease of '${lease.owner}' on run '${lease.runId}' (epoch ${lease.epoch}) was released; claim " +
                    "the run again before writing to it.",
            )
        }
    }

    /** Refuses a [record] of another run than [lease]'s. */
    public fun requireSameRun(lease: Lease, record: CheckpointRecord) {
        require(lease.runId == record.runId) {
            "Checkpoint ${record.sequence} belongs to run '${record.runId}' but was written with the lease of run " +
                "'${lease.runId}'; claim run '${record.runId}' and write with its lease."
        }
    }

    /** Throws [CheckpointConflictException] unless [record] is the next checkpoint of [row]'s run. */
    public fun checkNext(record: CheckpointRecord, row: RunRow, parentExists: (Long) -> Boolean) {
        val expected = row.latestSequence + 1
        if (record.sequence != expected) {
            val why = if (record.sequence <= row.latestSequence) {
                "checkpoint ${record.sequence} already exists (another writer got there first, or it was saved twice)"
            } else {
                "that would leave a gap after ${row.latestSequence}"
            }
            throw CheckpointConflictException(
                record.runId,
                record.sequence,
                row.latestSequence,
                "Cannot append checkpoint ${record.sequence} to run '${record.runId}': the next sequence is " +
                    "$expected and $why. Re-read the latest checkpoint and continue from sequence $expected.",
            )
        }
        val parent = record.parentSequence
        // The run's latest checkpoint is always stored (pruning keeps it, deleting the run drops the row too), so
        // only a parent further back is looked up: a checkpoint per step continues the latest one without a read.
        if (parent != null && parent != row.latestSequence && !parentExists(parent)) {
            throw CheckpointConflictException(
                record.runId,
                record.sequence,
                row.latestSequence,
                "Checkpoint ${record.sequence} of run '${record.runId}' names parent $parent, which is not stored " +
                    "(it was pruned). Point it at a stored checkpoint, or save a FULL checkpoint without that parent.",
            )
        }
    }

    /** Refuses to prune down to fewer than one checkpoint. */
    public fun requireKeepLatest(keepLatest: Int) {
        require(keepLatest >= 1) {
            "prune keeps the $keepLatest newest checkpoints, but at least the latest one must stay; " +
                "pass keepLatest >= 1, or delete the run."
        }
    }

    /**
     * The sequences pruning deletes: all but the [keepLatest] newest, less every checkpoint a kept DELTA depends on
     * (its parent, recursively, back to a FULL checkpoint).
     */
    public fun prunable(entries: List<PruneEntry>, keepLatest: Int): Set<Long> {
        val bySequence = entries.associateBy { it.sequence }
        val keep = HashSet<Long>()
        for (entry in entries.sortedByDescending { it.sequence }.take(keepLatest)) {
            var current: PruneEntry? = entry
            while (current != null && keep.add(current.sequence) && current.kind == CheckpointRecord.Kind.DELTA) {
                current = current.parentSequence?.let(bySequence::get)
            }
        }
        return entries.map { it.sequence }.filterTo(HashSet()) { it !in keep }
    }
}
