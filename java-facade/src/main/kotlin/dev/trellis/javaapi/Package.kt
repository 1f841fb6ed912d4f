/*
 * Package dev.trellis.javaapi — the Java API (`docs/java.md`): building graphs (`Trellis.kt`, `JavaGraph.kt`, `Keys.kt`,
 * `JacksonKeys.kt`, `NodeOptions.kt`, `FirstMatchRoutes.kt`, `Failures.kt`, `JavaCompensation.kt`,
 * `JavaNodeInterceptor.kt`, composition in `ChildMapping.kt`, `MapOptions.kt`, `MapTask.kt`), node bodies (`NodeAction.kt`,
 * `JavaNodeScope.kt`), running them (`TrellisRunner.kt`, `JavaRunHandle.kt`, `JavaRunOptions.kt`) and the asynchronous
 * adapters of agents and stores (`AsyncAgent.kt`, `AsyncCheckpointStore.kt`).
 *
 * May call: the runtime's public API and `dev.trellis.javaapi.internal`; it adapts, it decides nothing itself.
 */
package dev.trellis.javaapi
