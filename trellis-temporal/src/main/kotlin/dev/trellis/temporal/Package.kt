/*
 * Package dev.trellis.temporal — unchanged Trellis graphs run as Temporal workflows (`docs/temporal.md`): the runner
 * over a `WorkflowClient` that starts and attaches to runs (`TemporalRunner.kt`), the handle of a run that awaits,
 * streams, answers interrupts, cancels and queries it (`TemporalRun.kt`, its results in `TemporalRunResult.kt`), the
 * side channel of live events, its in-JVM form and its PostgreSQL form across JVMs (`LiveEvents.kt`,
 * `InMemoryLiveEvents.kt`, `PostgresLiveEvents.kt`), the registration of graphs with a worker (`TemporalWorkers.kt`),
 * options such as the bound on a written value (`TemporalOptions.kt`) and a node's failure as Temporal reports it
 * (`TemporalNodeException.kt`).
 *
 * May call: `internal`, the runtime's public API, the Temporal Java SDK, JDBC (`PostgresLiveEvents.kt`).
 */
package dev.trellis.temporal
