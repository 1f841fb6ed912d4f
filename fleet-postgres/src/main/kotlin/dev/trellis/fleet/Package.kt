/*
 * Package dev.trellis.fleet — a fleet of worker JVMs running graphs durably from a queue of runs in PostgreSQL
 * (`docs/scale-out.md`): submitting and watching runs from any JVM (`FleetClient.kt`, `JavaFleetClient.kt`,
 * `Submission.kt`, `FleetRun.kt`, `FleetResult.kt`, `FleetStatus.kt`), the worker that claims and runs them
 * (`FleetWorker.kt`, `FleetWorkerOptions.kt`, `FleetRunContext.kt`) and what it reports (`FleetObserver.kt`).
 *
 * May call: the runtime's public API, `dev.trellis.checkpoint.postgres`, and `dev.trellis.fleet.internal`.
 */
package dev.trellis.fleet
