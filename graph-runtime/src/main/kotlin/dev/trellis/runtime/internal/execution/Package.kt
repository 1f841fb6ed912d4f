/*
 * Package dev.trellis.runtime.internal.execution — one execution of a node (`docs/semantics.md` §2, §10, §13.1).
 *
 * Owns: the execution, which is the node body's scope — its buffered writes, reads through its slice, charges and
 * outcome (`Execution.kt`); the check of each write (`WriteCheck.kt`); interrupts and their answers
 * (`InterruptSignal.kt`, `Answers.kt`); interceptor chains (`Interceptors.kt`); the coroutine an execution runs in
 * (`NodeCoroutine.kt`), the workers that start begun executions (`Workers.kt`), what the runtime learns of how long
 * nodes take to start (`StartCosts.kt`, with what it keeps per graph) and the monitor that starts another worker when
 * a queue stalls (`StallMonitor.kt`).
 *
 * May call: `scheduling` (its engine and drive right), `policies` (an execution's attempts, charges, cache),
 * `composition` (a composite node's body), `events` (a node's own events).
 */
package dev.trellis.runtime.internal.execution
