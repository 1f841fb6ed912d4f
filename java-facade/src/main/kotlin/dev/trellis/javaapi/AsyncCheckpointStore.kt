package dev.trellis.javaapi

import dev.trellis.checkpoint.CheckpointRecord
import dev.trellis.checkpoint.CheckpointStore
import dev.trellis.checkpoint.Lease
import dev.trellis.checkpoint.RunInfo
import dev.trellis.javaapi.internal.AsyncStoreAdapter
import dev.trellis.javaapi.internal.CheckpointStoreAdapter
import java.util.Optional
import java.util.concurrent.CompletionStage

/**
 * A checkpoint store Java code can implement: the runtime's `CheckpointStore` with `CompletionStage`s instead of
 * suspending functions. Give it to a runner as `new Checkpointing(myStore.asCheckpointStore())`.
 *
 * The contract is `CheckpointStore`'s (see its documentation and `docs/persistence-stores.md`): one writer per run,
 * enforced by leases and fencing — [claim] grants a lease with a new epoch, [append] checks in one step that the
 * lease still holds the run's current epoch (else it fails with `FencedOutException`) and that the record is the
 * next sequence with an existing parent (else `CheckpointConflictException`). Complete a stage exceptionally with
 * those exceptions (or any other, which fails the run); a `CompletionException` around them is unwrapped.
 *
 * The methods are called on the run's own threads and must not block: return at once and do blocking I/O on your
 * own executor (e.g. `CompletableFuture.supplyAsync(() -> jdbc(...), ioPool)`). When the run is cancelled while
 * it waits, the stage is cancelled if it is a `Future`.
 *
 * ```java
 * class AuditedStore implements AsyncCheckpointStore {
 *     private final AsyncCheckpointStore inner = AsyncCheckpointStore.of(new SqliteCheckpointStore(path));
 *     public CompletionStage<Void> append(Lease lease, CheckpointRecord record) {
 *         audit.log(record.getRunId(), record.getSequence(), record.getStatus());
 *         return inner.append(lease, record);
 *     }
 *     // ... the other methods delegate to inner
 * }
 * ```
 */
public interface AsyncCheckpointStore : AutoCloseable {
    /**
     * Takes ownership of [runId] for [owner]: a lease with the previous epoch + 1, creating the run if it is new.
     * Fails with `RunOwnedException` when another owner holds a lease that has not expired.
     */
    public fun claim(runId: String, owner: String): CompletionStage<Lease>

    /** Extends [lease] by the store's lease duration; fails with `FencedOutException` when it no longer holds the run. */
    public fun renew(lease: Lease): CompletionStage<Lease>

    /** Gives up [lease] so that anyone may claim the run at once; ignores a lease that was fenced out already. */
    public fun release(lease: Lease): CompletionStage<Void?>

    /**
     * Saves [record] as the next checkpoint of its run, checking [lease] (`FencedOutException`) and the sequence and
     * parent (`CheckpointConflictException`) in the same step as the insert.
     */
    public fun append(lease: Lease, record: CheckpointRecord): CompletionStage<Void?>

    /** The checkpoint of [runId] with the highest sequence; empty when the run has none. */
    public fun latest(runId: String): CompletionStage<Optional<CheckpointRecord>>

    /** The [sequence]-th checkpoint of [runId]; empty when it does not exist or was pruned. */
    public fun get(runId: String, sequence: Long): CompletionStage<Optional<CheckpointRecord>>

    /** Every stored checkpoint of [runId], oldest first; empty for an unknown run. */
    public fun history(runId: String): CompletionStage<List<CheckpointRecord>>

    /** Every run the store knows, ordered by run id. */
    public fun runs(): CompletionStage<List<RunInfo>>

    /**
     * Deletes the checkpoints of [runId] but the [keepLatest] newest and those they depend on (back to a full one);
     * returns how many were deleted. Fails with `IllegalArgumentException` when [keepLatest] is less than 1.
     */
    public fun prune(runId: String, keepLatest: Int): CompletionStage<Int>

    /** Deletes [runId] with its checkpoints and lease (a writer still holding it is fenced out); ignores unknown runs. */
    public fun delete(runId: String): CompletionStage<Void?>

    /** Releases the store's own resources; nothing by default. */
    override fun close() {}

    /** This store as the runtime's `CheckpointStore`, for `new Checkpointing(...)`. */
    public fun asCheckpointStore(): CheckpointStore = CheckpointStoreAdapter(this)

    /** Adapters. */
    public companion object {
        /**
         * [store] as an [AsyncCheckpointStore]: to call a store from Java, or to decorate one of the built-in
         * stores in a store of your own.
         */
        @JvmStatic
        public fun of(store: CheckpointStore): AsyncCheckpointStore =
            (store as? CheckpointStoreAdapter)?.store ?: AsyncStoreAdapter(store)
    }
}
