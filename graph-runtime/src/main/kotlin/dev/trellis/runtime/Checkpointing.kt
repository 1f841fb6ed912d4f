package dev.trellis.runtime

import dev.trellis.checkpoint.CheckpointStore
import kotlinx.serialization.json.JsonObject
import java.lang.management.ManagementFactory
import java.time.Duration
import java.util.UUID

/**
 * How a run saves checkpoints: where ([store]), how often ([mode]), as whom ([owner]) and how to read old ones
 * ([migrations]).
 *
 * With [Mode.EVERY_STEP] a checkpoint is saved after every node completion, before any node it triggers starts,
 * so a completed node's writes are never lost and it never re-runs after a crash; nodes that were running at the
 * crash run again on resume (at-least-once). Checkpoints store what changed (per-key writes) and a full
 * snapshot every [fullSnapshotEvery] checkpoints.
 *
 * ```kotlin
 * val store = SqliteCheckpointStore(Path.of("runs.db"))
 * val result = graph.invoke(input, RunOptions(runId = "order-42", checkpointing = Checkpointing(store)))
 * // after a crash, in a new process:
 * graph.resume("order-42", RunOptions(checkpointing = Checkpointing(store)))
 * ```
 */
public class Checkpointing @JvmOverloads constructor(
    /** Where checkpoints go. */
    public val store: CheckpointStore,
    /** When checkpoints are saved. */
    public val mode: Mode = Mode.EVERY_STEP,
    /** Who writes: a process id; one writer per run is enforced with leases and fencing. */
    public val owner: String = defaultOwner(),
    /** A full snapshot every this many checkpoints; deltas in between. */
    public val fullSnapshotEvery: Int = 100,
    /** Migrations of old state schema versions, applied in order when a checkpoint is loaded. */
    public val migrations: List<StateMigration> = emptyList(),
    /**
     * How long a claim of the run waits, at most, for a lease another owner holds to lapse — a crashed process's,
     * which nobody renews — before it takes the run over; zero (the default) refuses at once with
     * [dev.trellis.checkpoint.RunOwnedException]. The store decides each claim, so the run is never taken before the
     * lease lapsed; an owner that keeps renewing is alive, and after this wait the claim fails with
     * `RunOwnedException` naming it and the wait (`docs/persistence.md`, "Resuming after a crash").
     */
    public val leaseWait: Duration = Duration.ZERO,
    /**
     * Whether a step's checkpoint is waited for ([Durability.SYNC], the default) or written behind the run
     * ([Durability.ASYNC]: the run goes on while at most [Durability.MAX_PENDING] step checkpoints are being written,
     * in order; the run's last checkpoint, and every one that ends or interrupts it, is still waited for). A crash
     * then loses at most the step checkpoints not yet written, whose nodes run again on resume
     * (`docs/persistence.md`, "Durability: waiting for each step, or not").
     */
    public val durability: Durability = Durability.SYNC,
) {
    init {
        require(fullSnapshotEvery >= 1) { "fullSnapshotEvery must be at least 1, but was $fullSnapshotEvery." }
        require(owner.isNotBlank()) { "The checkpoint owner must not be blank; it identifies the writing process." }
        require(!leaseWait.isNegative) { "leaseWait must not be negative, but was $leaseWait; pass zero not to wait." }
    }

    /**
     * This checkpointing with [leaseWait] in place of its own, every other setting kept: how a process that resumes
     * a crashed run waits for the dead owner's lease to lapse,
     * `new Checkpointing(store).withLeaseWait(Duration.ofMinutes(1))` from Java.
     */
    public fun withLeaseWait(leaseWait: Duration): Checkpointing =
        Checkpointing(store, mode, owner, fullSnapshotEvery, migrations, leaseWait, durability)

    /**
     * This checkpointing with [durability] in place of its own, every other setting kept:
     * `new Checkpointing(store).withDurability(Checkpointing.Durability.ASYNC)` from Java.
     */
    public fun withDurability(durability: Durability): Checkpointing =
        Checkpointing(store, mode, owner, fullSnapshotEvery, migrations, leaseWait, durability)

    /**
     * Whether the run waits for each step's checkpoint to be stored (`docs/persistence.md`, "Durability: waiting for
     * each step, or not"). Only [Mode.EVERY_STEP] has step checkpoints; the other modes are the same with either.
     */
    public enum class Durability {
        /** Every checkpoint is stored before the nodes its step triggered start: a crash loses no completed step. */
        SYNC,

        /**
         * A step's checkpoint is handed to a writer that stores the run's checkpoints one after the other while the
         * run goes on; the run waits only when [MAX_PENDING] of them are not yet stored, and for every checkpoint
         * that is not a step's (the run's end — completed, failed, interrupted, drained — and a resumed run's first).
         * A crash loses at most the [MAX_PENDING] latest step checkpoints, never one before a stored one: the stored
         * ones are always a prefix of the run's, and resume runs the nodes of the lost steps again. A step checkpoint
         * that the store refuses (fenced out, unreachable) fails or stops the run at its next checkpoint, not at its
         * own step.
         */
        ASYNC,
        ;

        /** Constants. */
        public companion object {
            /** The most step checkpoints of one run [ASYNC] lets be written behind it: the most a crash loses. */
            public const val MAX_PENDING: Int = 16
        }
    }

    /** When checkpoints are saved. */
    public enum class Mode {
        /** After every node completion (and at the start and the end of the run). */
        EVERY_STEP,

        /** Only when the run ends (completed, failed, interrupted or drained). */
        ON_EXIT,

        /** Never. */
        OFF,
    }

    private companion object {
        fun defaultOwner(): String = "${ManagementFactory.getRuntimeMXBean().name}/${UUID.randomUUID()}"
    }
}

/**
 * Turns the state of a checkpoint written with schema version [from] into schema version [to] (`from + 1`),
 * as a JSON object of key name to value.
 *
 * ```kotlin
 * StateMigration(from = 1, to = 2) { state -> JsonObject(state + ("title" to JsonPrimitive("untitled"))) }
 * ```
 */
public class StateMigration(
    /** The version this migration reads. */
    public val from: Int,
    /** The version it produces; must be `from + 1`. */
    public val to: Int,
    /** The transformation of the state's values, by key name. */
    public val migrate: (JsonObject) -> JsonObject,
) {
    init {
        require(to == from + 1) { "A StateMigration goes one version at a time, but this one goes from $from to $to." }
    }

    override fun toString(): String = "StateMigration($from -> $to)"
}
