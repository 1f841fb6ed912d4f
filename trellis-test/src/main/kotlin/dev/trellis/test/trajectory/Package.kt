/*
 * Package dev.trellis.test.trajectory — assertions on what a run did (`Trajectory.kt`): node executions and tool
 * calls exactly, in order or in any order, counts, the state at the end or after a node, read from events or from a
 * store's checkpoints; failures show a diff (`TrajectoryAssertionError.kt`).
 *
 * May call: `internal` and the runtime's public API.
 */
package dev.trellis.test.trajectory
