/*
 * Package dev.trellis.runtime.internal.policies — what wraps an execution or a run (`docs/semantics.md` §7, §13).
 *
 * Owns: retry (`Retry.kt`, the attempts of an execution), the timeout of an attempt (`TimedAttempt.kt`), error routes
 * (`FailureRouting.kt`), the node result cache (`NodeCaching.kt`), budgets and their meters (`Meters.kt`) and
 * compensation of a failed run (`CompensationLog.kt`). A graph that declares none of them pays for none: each policy
 * is reached only from a node or run that has it.
 *
 * May call: `execution` (the execution a policy wraps), `scheduling` (the engine, to fail, route or compensate a run),
 * `events`, `composition` (the charges of child runs) and `checkpoint` (what a compensation log or meters put in a
 * checkpoint).
 */
package dev.trellis.runtime.internal.policies
