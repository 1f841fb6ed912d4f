/*
 * Package dev.trellis.runtime.internal.events — a run's events and its record (`docs/semantics.md` §8).
 *
 * Owns: event delivery — the run's one ordered log, where each event gets its sequence number before anyone can see
 * it (`EventLog.kt`), and when producers wait for room (`Outbox.kt`); the timestamps of the driver's node events and
 * the events a node's body sends (`NodeEvents.kt`); what a run's result is made of (`RunRecorder.kt`); and an event as
 * JSON for a caller in another process (`EventCodec.kt`).
 *
 * May call: `execution` and `scheduling` (the execution and engine an event is about), `policies` (charges in a
 * result), `checkpoint` (state values written and read with their keys' serializers, as checkpoints do).
 */
package dev.trellis.runtime.internal.events
