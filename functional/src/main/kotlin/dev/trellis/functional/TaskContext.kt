package dev.trellis.functional

import kotlinx.coroutines.ThreadContextElement
import java.math.BigDecimal
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * The task a piece of code runs in: in the coroutine context of a task's attempts, and in a thread local on every
 * thread that runs them (so that a Java task's blocking code finds it too). Collects the task's charges, all attempts
 * included (`docs/semantics.md` §14).
 */
internal class TaskContext(val name: String) :
    AbstractCoroutineContextElement(TaskContext),
    ThreadContextElement<TaskContext?> {
    private val charges = LinkedHashMap<String, BigDecimal>()

    fun charge(meter: String, amount: Double) {
        require(meter.isNotBlank()) { "A meter needs a name, such as \"tokens\" or \"usd\"." }
        require(amount.isFinite() && amount >= 0.0) {
            "A charge must be a finite amount, not negative, but $amount was charged to '$meter'."
        }
        synchronized(charges) { charges[meter] = (charges[meter] ?: BigDecimal.ZERO).add(BigDecimal.valueOf(amount)) }
    }

    /** The charges so far, by meter. */
    fun charges(): Map<String, Double> = synchronized(charges) { charges.mapValues { it.value.toDouble() } }

    override fun updateThreadContext(context: CoroutineContext): TaskContext? = current.get().also { current.set(this) }

    override fun restoreThreadContext(context: CoroutineContext, oldState: TaskContext?) {
        current.set(oldState)
    }

    companion object Key : CoroutineContext.Key<TaskContext> {
        /** The task the current thread runs, if any. */
        val current: ThreadLocal<TaskContext?> = ThreadLocal()
    }
}
