/*
 * Package dev.trellis.runtime.internal — the runtime's machinery, not API (`internal` throughout; see CONTRIBUTING.md,
 * "Map of the house").
 *
 * This package itself holds what every part of the runtime uses and that depends on none of them: which throwables
 * no code may treat as an ordinary failure (`Fatal.kt`), the calls error messages suggest in the caller's language,
 * Kotlin or Java (`CallNames.kt`), and run ids (`RunIds.kt`). The runtime is in its sub-packages, one per concept:
 *
 * - `scheduling` — the scheduler of a run (`Engine`): lifecycle, drive loop, readiness, merge, edges.
 * - `execution` — one execution of a node: its scope, attempts, interceptors, the coroutine and workers that run it.
 * - `policies` — what wraps an execution or a run: retry, timeout, error routes, node cache, budgets, compensation.
 * - `composition` — subgraph calls and map tasks: child runs inside one execution.
 * - `persistence` — saving a run: checkpoints, the run's lease and its renewal, restoring a run.
 * - `checkpoint` — the checkpoint format: encoding, decoding and loading positions.
 * - `events` — a run's events on their way to its reader, and the record its result is made of.
 *
 * Dependency rule: the public packages reach the runtime through `scheduling` (an `Engine`, `engineEvents`,
 * `resultFor`), `checkpoint` (loading) and `events.EventLog`; the sub-packages are parts of one `Engine` and may call
 * each other; this package calls none of them.
 */
package dev.trellis.runtime.internal
