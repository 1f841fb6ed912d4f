package dev.trellis.checkpoint

import dev.trellis.checkpoint.internal.StoreRules

/**
 * Durable storage of a run's checkpoints, with one writer per run enforced by leases and fencing.
 *
 * A process that runs a graph first [claims][claim] the run and gets a [Lease] carrying a new fencing epoch, then
 * [appends][append] checkpoints 1, 2, 3… with that lease, [renewing][renew] it before it expires. Every append
 * checks, in the same transaction as the insert, that the lease's epoch is still the run's current epoch and that
 * the checkpoint's sequence is the next one; a process whose lease was taken over gets [FencedOutException] and
 * must stop. Readers ([latest], [get], [history], [runs]) need no lease.
 *
 * Implementations: [InMemoryCheckpointStore] (tests, single process; in this module),
 * `dev.trellis.checkpoint.sqlite.SqliteCheckpointStore` (artifact `trellis-checkpoint-store-sqlite`: the embedded
 * default; several processes may share the file) and `dev.trellis.checkpoint.postgres.PostgresCheckpointStore`
 * (artifact `trellis-checkpoint-store-postgres`: shared use by many workers).
 * All functions are safe to call concurrently; blocking I/O happens on the store's dispatcher, except where the SQL
 * stores run a run's short calls on the caller's thread to save a thread hop (`docs/persistence-stores.md`, "Which
 * thread runs a call").
 *
 * ```kotlin
 * val store = SqliteCheckpointStore(Path.of("trellis.db"))
 * var lease = store.claim("run-1", owner = "worker-a")
 * store.append(lease, record)
 * lease = store.renew(lease)
 * store.release(lease)
 * ```
 */
public interface CheckpointStore : AutoCloseable {
    /**
     * Takes ownership of [runId] for [owner] and returns a lease with a new fencing epoch (the previous epoch + 1).
     *
     * The run is created if it does not exist. [runId] and [owner] must follow the id policy (not blank, at most 256
     * characters, no NUL character, no unpaired surrogates), or the claim fails with [IllegalArgumentException]
     * before touching the store. The claim succeeds when nobody holds a live lease, when the live
     * lease is [owner]'s own (the earlier lease is then fenced out), or when the holder's lease has expired.
     *
     * @throws RunOwnedException when another owner holds a lease that has not expired.
     */
    public suspend fun claim(runId: String, owner: String): Lease

    /**
     * Extends [lease] by the store's lease duration from now and returns the extended lease.
     *
     * Renewing works as long as the lease still holds the run's current epoch, even if it lapsed in the meantime
     * (nobody took over, so nothing was lost).
     *
     * @throws FencedOutException when the run was claimed by someone else since, released, or deleted.
     */
    public suspend fun renew(lease: Lease): Lease

    /**
     * Gives up [lease], so that any owner may claim the run at once. A lease that was already fenced out is
     * ignored. After release, appends with [lease] fail with [FencedOutException].
     */
    public suspend fun release(lease: Lease)

    /**
     * Saves [record] as the next checkpoint of its run, written under [lease].
     *
     * In one transaction the store checks that [lease] still holds the run's current epoch, that
     * `record.sequence` is the latest sequence + 1, and that the record's parent exists, then inserts it.
     *
     * @throws FencedOutException when another process claimed the run since [lease] was granted, or the lease was
     *   released or the run deleted.
     * @throws CheckpointConflictException when the sequence is not the next one or the parent does not exist.
     * @throws IllegalArgumentException when [record] belongs to another run than [lease].
     */
    public suspend fun append(lease: Lease, record: CheckpointRecord)

    /**
     * The checkpoint of [runId] with the highest sequence, or `null` when the run has none.
     * @throws UnreadableCheckpointException when its stored row cannot be decoded.
     */
    public suspend fun latest(runId: String): CheckpointRecord?

    /**
     * The [sequence]-th checkpoint of [runId], or `null` when it does not exist or was pruned.
     * @throws UnreadableCheckpointException when its stored row cannot be decoded.
     */
    public suspend fun get(runId: String, sequence: Long): CheckpointRecord?

    /**
     * All stored checkpoints of [runId], oldest first (ordered by sequence); empty for an unknown run. A checkpoint
     * whose stored row cannot be decoded is left out ([get] of its sequence says why).
     */
    public suspend fun history(runId: String): List<CheckpointRecord>

    /** Every run the store knows, ordered by run id. */
    public suspend fun runs(): List<RunInfo>

    /**
     * What the store knows of run [runId] (as [runs] lists it), or `null` for an unknown run. The SQL stores read one
     * row; this default searches [runs].
     */
    public suspend fun run(runId: String): RunInfo? = runs().firstOrNull { it.runId == runId }

    /**
     * One page of the runs the store knows, as [query] selects them (filtered by status and graph, ordered by run
     * id or newest first, after a run id, up to a limit). The SQL stores answer it with one indexed query however
     * many runs they hold; this default sorts and filters [runs].
     *
     * @throws IllegalArgumentException when the order is newest first and the run to start after is not in the
     *   store (deleted since the previous page was read).
     */
    public suspend fun runs(query: RunQuery): List<RunInfo> {
        val all = runs()
        val ordered = when (query.order) {
            RunQuery.Order.RUN_ID -> all.sortedBy { it.runId }
            RunQuery.Order.NEWEST_FIRST -> all.sortedWith(StoreRules.newestFirst)
        }
        val start = when {
            query.after == null -> 0
            query.order == RunQuery.Order.RUN_ID -> ordered.indexOfFirst { it.runId > query.after }
                .let { if (it < 0) ordered.size else it }
            else -> ordered.indexOfFirst { it.runId == query.after }.let {
                require(it >= 0) { StoreRules.unknownCursor(query.after) }
                it + 1
            }
        }
        val out = ArrayList<RunInfo>()
        for (run in ordered.subList(start, ordered.size)) {
            if (!query.matches(run)) continue
            out += run
            if (out.size == query.limit) break
        }
        return out
    }

    /**
     * Deletes old checkpoints of [runId] and returns how many were deleted.
     *
     * The rule: the [keepLatest] newest checkpoints are kept, and so is every checkpoint a kept one depends on —
     * a [CheckpointRecord.Kind.DELTA] checkpoint keeps its parent, recursively, back to the [FULL][CheckpointRecord.Kind.FULL]
     * checkpoint the delta chain starts from. So every kept checkpoint can still be restored. Checkpoints
     * other runs were forked from are not tracked; prune the fork's origin only when the fork no longer needs it.
     *
     * @throws IllegalArgumentException when [keepLatest] is less than 1.
     */
    public suspend fun prune(runId: String, keepLatest: Int): Int

    /** Deletes [runId] with all its checkpoints and its lease. Leases on it are fenced out. Unknown runs are ignored. */
    public suspend fun delete(runId: String)

    /** Releases the store's own resources (connections it opened). A store that owns nothing does nothing. */
    override fun close() {}
}
