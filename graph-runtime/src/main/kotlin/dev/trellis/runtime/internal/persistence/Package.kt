/*
 * Package dev.trellis.runtime.internal.persistence — saving and restoring a run (`docs/persistence.md`).
 *
 * Owns: writing a run's checkpoints, full or delta, nested for child runs (`Checkpointer.kt`), what changed since the
 * last one (`IndexSet.kt`), when an engine saves (`RunCheckpoints.kt`), the run's lease (`RunLease.kt`: claim,
 * renewal, release) and the one thread that times the renewals of all runs (`LeaseRenewal.kt`), and putting a
 * restored position back into an engine (`Restore.kt`). The format of what is written is `checkpoint`'s.
 *
 * May call: `checkpoint` (encoding), `scheduling` (the engine and its position), `policies` (meters and the
 * compensation log are checkpointed), `events` (what the result records), `execution`.
 */
package dev.trellis.runtime.internal.persistence
