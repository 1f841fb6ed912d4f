package dev.trellis.temporal.internal

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlin.coroutines.resume

/**
 * The interrupts of a run in workflow code that wait for an answer, by id (the asking node's path,
 * `docs/semantics.md` §11). A node that asks waits in [await]; the workflow Update `answer` resumes it. Used only
 * on the workflow thread (the Update's handler runs there too), so it needs no lock.
 */
internal class PendingInterrupts(private val runId: String) {
    private class Pending(val payload: String, val waiter: CancellableContinuation<String>)

    private val pending = LinkedHashMap<String, Pending>()

    /** Suspends until interrupt [id], asking [payload], is answered; returns the answer. */
    suspend fun await(id: String, payload: String): String = suspendCancellableCoroutine { cont ->
        pending[id] = Pending(payload, cont)
        cont.invokeOnCancellation { if (pending[id]?.waiter === cont) pending.remove(id) }
    }

    /** The pending interrupts: id to payload, in the order they were asked. */
    fun asked(): Map<String, String> = pending.mapValues { it.value.payload }

    /**
     * Checks an answer before the workflow accepts it (the Update's validator, which rejects it without a trace
     * in the run's history).
     *
     * @throws IllegalArgumentException when no interrupt [id] is pending.
     */
    fun validate(id: String) {
        require(id in pending) {
            if (pending.isEmpty()) {
                "Run '$runId' has no pending interrupt '$id': no node of it waits for an answer now. Answer an " +
                    "interrupt once TemporalRun.interrupts() lists it."
            } else {
                "Run '$runId' has no pending interrupt '$id'; its pending interrupts are ${pending.keys} (by node " +
                    "path, see TemporalRun.interrupts())."
            }
        }
    }

    /** Answers interrupt [id] (validated): its node resumes with [answer]. */
    fun answer(id: String, answer: String) {
        validate(id)
        pending.remove(id)!!.waiter.resume(answer)
    }
}
