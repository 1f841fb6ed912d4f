/*
 * Package dev.trellis.functional — workflows as ordinary code whose tasks are durable (`docs/functional.md`): the
 * workflow and its `task`/`taskAsync` steps (`Workflow.kt`), and one run of it over a checkpoint store, replaying
 * recorded task results on resume and refusing a changed sequence of tasks (`WorkflowRun.kt`).
 *
 * May call: the checkpoint store's public API, graph-dsl, kotlinx.coroutines.
 */
package dev.trellis.functional
