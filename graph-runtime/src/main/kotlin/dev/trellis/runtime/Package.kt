/*
 * Package dev.trellis.runtime — running graphs: the public API of the runtime (`docs/semantics.md`,
 * `docs/persistence.md`).
 *
 * Owns: running a graph and its options (`Runs.kt`, `RunOptions.kt`, `RunHandle.kt`, `RunControl.kt`), results and
 * statuses (`RunResult.kt`, `Status.kt`, `StatusMermaid.kt`), the one event hierarchy (`RunEvent.kt`), budgets
 * (`Budget.kt`), compensation results (`CompensationResult.kt`), checkpointing options, resume and fork
 * (`Checkpointing.kt`, `Persistence.kt`, `RunSnapshot.kt`), the exceptions a run throws, and the mark of calls that
 * come through the Java facade (`JavaCaller.kt`).
 *
 * May call: `internal.scheduling` (an engine per run), `internal.checkpoint` (loading), `internal.events`; never the
 * other way round except for these public types.
 */
package dev.trellis.runtime
