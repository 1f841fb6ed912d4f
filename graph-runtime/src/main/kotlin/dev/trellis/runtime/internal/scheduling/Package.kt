/*
 * Package dev.trellis.runtime.internal.scheduling — the scheduler of one run (`docs/semantics.md` §3–6, §10).
 *
 * Owns: the run's lifecycle (`Engine.kt`, with an overview of how the pieces meet; `RunLoop.kt`, start to end;
 * `EngineInvocation.kt`, how callers run an engine), the drive loop and the drive right (`Drive.kt`,
 * `DriveRight.kt`: who runs the scheduler, and how finished executions reach it), the scheduler's position and its
 * readiness rule (`Position.kt`: tokens on input channels, what is ready), what happens when an execution begins and
 * ends (`Steps.kt`), the merge rule (`Merge.kt`, a pure function), edge choice (`EdgeDecision.kt`), and the time a run
 * reads under a test scheduler (`TestSchedulers.kt`).
 *
 * May call: every other runtime package — the engine ties them together (executions and workers, policies, child
 * runs, checkpoints, events). Only the holder of the drive right touches the state and position of a run.
 */
package dev.trellis.runtime.internal.scheduling
