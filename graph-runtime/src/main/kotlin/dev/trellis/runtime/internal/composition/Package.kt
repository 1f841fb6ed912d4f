/*
 * Package dev.trellis.runtime.internal.composition — subgraph calls and map tasks (`docs/semantics.md` §11).
 *
 * Owns: child runs of subgraph nodes and the fold of map tasks inside one execution (`Composition.kt`), where a child
 * run sits and what the child runs of one graph share (`ChildPlan.kt`), the tasks of a map node (`MapTasks.kt`) and
 * the workers that run them with a concurrency limit (`TaskWorkers.kt`). To the scheduler, a composite node is a
 * node like any other.
 *
 * May call: `scheduling` (a child run is an `Engine` of the child graph), `execution`, `policies` (charges,
 * compensation, interceptors of tasks), `persistence` and `checkpoint` (a child run checkpoints through its parent).
 */
package dev.trellis.runtime.internal.composition
