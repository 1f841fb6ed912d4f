package dev.trellis.runtime.internal.execution

/*
 * Interrupts (`docs/semantics.md` §6, `docs/persistence.md`): a node's body that asks for input (`NodeScope.interrupt`)
 * throws this signal, which ends its attempt; the execution then ends INTERRUPTED with the payload, and the run
 * pauses. A resumed run answers the interrupt instead: `interrupt` returns the answer ([Answers]).
 */

/** Thrown by `NodeScope.interrupt` to end the attempt; never seen by users unless their node catches it. */
internal class InterruptSignal(
    val payload: String,
) : RuntimeException("The node asked for input: $payload", null, false, false)
