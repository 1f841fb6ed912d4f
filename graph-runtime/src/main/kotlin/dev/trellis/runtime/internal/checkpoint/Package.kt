/*
 * Package dev.trellis.runtime.internal.checkpoint — the checkpoint format (`docs/persistence.md`).
 *
 * Owns: the stored shape of a position (`PositionData.kt`), writing it as full or delta payload text
 * (`PositionEncoder.kt`, `PayloadTexts.kt`, `IsoInstant.kt`, `WritableState.kt`), reading it back and folding a delta
 * chain into a position (`PositionCodec.kt`, `Loader.kt`, `KnownNodes.kt`), and the check that a value reads back as
 * it was written (`ReadBack.kt`). Nothing here talks to a store's lease or decides when to save: that is
 * `persistence`'s.
 *
 * May call: the engine's position, executions and checkpointer it encodes (`scheduling`, `execution`,
 * `persistence`), and `policies` (the compensation log's entries).
 */
package dev.trellis.runtime.internal.checkpoint
