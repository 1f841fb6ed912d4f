package dev.trellis.runtime.internal

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import java.util.concurrent.Executors

/**
 * The thread lease renewals are timed on, shared by all checkpointed runs of the JVM and started with the first.
 * Renewal must not depend on the run's dispatcher being free: nodes that block their threads (a `runBlocking`
 * caller's only thread, or every thread of `Dispatchers.Default`) would otherwise delay it past the lease's expiry,
 * and another worker would take a healthy run over. The renewal itself runs on the store's dispatcher; this thread
 * only waits between renewals, so one is enough for any number of runs.
 */
internal object LeaseRenewal {
    val dispatcher: CoroutineDispatcher by lazy {
        Executors.newSingleThreadExecutor { task ->
            Thread(task, "trellis-lease-renewal").apply { isDaemon = true }
        }.asCoroutineDispatcher()
    }
}
