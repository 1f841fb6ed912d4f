/*
 * Package dev.trellis.temporal — unchanged Trellis graphs run as Temporal workflows (`docs/temporal.md`): the runner
 * over a `WorkflowClient` that starts, attaches to, awaits and cancels runs (`TemporalRunner.kt`, its results in
 * `TemporalRunResult.kt`), the registration of graphs with a worker (`TemporalWorkers.kt`), options such as the bound
 * on a written value (`TemporalOptions.kt`) and a node's failure as Temporal reports it (`TemporalNodeException.kt`).
 *
 * May call: `internal`, the runtime's public API, the Temporal Java SDK.
 */
package dev.trellis.temporal
