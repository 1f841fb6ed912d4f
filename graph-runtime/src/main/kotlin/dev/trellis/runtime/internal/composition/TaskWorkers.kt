package dev.trellis.runtime.internal.composition

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger

/**
 * The workers of one map execution's tasks (`docs/semantics.md` §11): run the task [slots] `0 until slots` with at
 * most [limit] at once, each slot exactly once, by coroutines of [scope].
 *
 * Workers are launched as they are needed, not [limit] at once: a worker taking a slot while more remain makes sure
 * one *spare* worker is launched (at most one launched and not yet started at a time). A spare starts when its
 * dispatcher gets to it — when a task suspends (`delay`, I/O) or another thread is free — and takes the next slot. So
 * tasks that suspend run [limit] at a time as before, while a thousand tasks that never suspend are run one after
 * another by the first worker, with one spare that finds nothing left, instead of a thousand coroutines.
 */
internal class TaskWorkers(
    private val scope: CoroutineScope,
    private val slots: Int,
    private val limit: Int,
    private val task: suspend (slot: Int) -> Unit,
) {
    private val next = AtomicInteger()
    private val launched = AtomicInteger()
    private val sparePending = AtomicBoolean()

    /** Launches the first worker; the group's job completes when every launched worker ended. */
    fun start() {
        if (slots == 0) return
        sparePending.set(true)
        launchWorker()
    }

    /** Launches a worker; called by the one caller that set [sparePending], which the worker clears as it starts. */
    private fun launchWorker() {
        launched.incrementAndGet()
        scope.launch {
            sparePending.set(false)
            while (isActive) {
                val slot = next.getAndIncrement()
                if (slot >= slots) break
                if (slot + 1 < slots) ensureSpare()
                task(slot)
            }
        }
    }

    private fun ensureSpare() {
        if (launched.get() >= limit || sparePending.get() || !sparePending.compareAndSet(false, true)) return
        // Only the holder of the flag launches, so the count cannot move between this check and the launch.
        if (launched.get() < limit) launchWorker() else sparePending.set(false)
    }
}
