/*
 * Package dev.trellis.javaapi — the Java API (`docs/java.md`): building graphs (`Trellis.kt`, `JavaGraph.kt`, `Keys.kt`,
 * `JacksonKeys.kt`, `NodeOptions.kt`, `RetryPolicy.kt`, `FirstMatchRoutes.kt`, `Failures.kt`, `Undo.kt`,
 * `Interceptor.kt`, composition in `ChildMapping.kt`, `MapOptions.kt`, `MapTask.kt`), node bodies (`NodeAction.kt`,
 * `NodeContext.kt`), running them (`TrellisRunner.kt`, `TrellisRun.kt`, `RunSettings.kt`) and the asynchronous
 * adapters of agents and stores (`AsyncAgent.kt`, `AsyncCheckpointStore.kt`).
 *
 * May call: the runtime's public API and `dev.trellis.javaapi.internal`; it adapts, it decides nothing itself.
 */
package dev.trellis.javaapi
