/*
 * Package dev.trellis.checkpoint — the checkpoint store API (`docs/persistence.md`, `docs/persistence-stores.md`):
 * the store contract with one fenced writer per run (`CheckpointStore.kt`, `Lease.kt`), what it stores
 * (`CheckpointRecord.kt`, `CheckpointRef.kt`, `RunInfo.kt`), its errors (`CheckpointStoreException.kt`), the node
 * result cache contract (`NodeCache.kt`) and the in-memory implementations of both.
 *
 * May call: nothing of graphs or runs; stores hold opaque payloads.
 */
package dev.trellis.checkpoint
