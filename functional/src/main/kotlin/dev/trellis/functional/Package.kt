/*
 * Package dev.trellis.functional — workflows as ordinary code whose steps are durable (`docs/functional.md`,
 * `docs/semantics.md` §14): the workflow and how it runs (`Workflow.kt`, `WorkflowSettings.kt`), the body's steps —
 * tasks with their policies, interrupts, graphs called as tasks — (`WorkflowScope.kt`, `TaskPolicy.kt`; for Java
 * `WorkflowBody.kt`, `WorkflowContext.kt`), the record of a run in a checkpoint store (`Journal.kt`), one execution of
 * the body replaying and recording its steps (`WorkflowRun.kt`), and one call of a run as a one-node graph run, which
 * gives it the runtime's events, interceptors, instrumentation and meters (`WorkflowLaunch.kt`).
 *
 * May call: the checkpoint store's and the runtime's public API, graph-dsl, trellis-jackson (Java types),
 * kotlinx.coroutines.
 */
package dev.trellis.functional
