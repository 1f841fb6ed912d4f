/*
 * Package dev.trellis.temporal.internal — how a run lives in Temporal: the workflow that runs the engine on the
 * workflow thread (`GraphWorkflow.kt`) with a deterministic dispatcher (`WorkflowDispatcher.kt`) and workflow time,
 * timers and randomness (`WorkflowTime.kt`), its interrupts waiting for the `answer` Update
 * (`PendingInterrupts.kt`) and the keys of the events it publishes (`LiveKeys.kt`); node attempts turned into
 * activity calls by a run-level interceptor (`ActivityNodes.kt`) and the activity that runs a node body on its state
 * slice, with the runtime's rules (`ActivityNodeScope.kt`), and returns its write set (`NodeActivity.kt`); the
 * payloads between them, with their size bound (`Payloads.kt`, `RunCodec.kt`); and the PostgreSQL side channel of
 * live events: its table (`LiveTable.kt`), background writer (`LiveWriter.kt`) and `LISTEN` thread (`LiveListener.kt`).
 *
 * May call: the runtime's public API (interceptors, run options, `RemoteEvents`), the Temporal Java SDK, JDBC and the
 * PostgreSQL driver (`LiveTable.kt`, `LiveListener.kt` only).
 */
package dev.trellis.temporal.internal
