package dev.trellis.temporal.internal

import io.temporal.activity.Activity
import io.temporal.client.ActivityCompletionException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.cancel
import kotlinx.coroutines.runBlocking
import java.util.concurrent.Executors
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.TimeUnit

/**
 * Heartbeats a node's activity while its body runs, when the activity has a heartbeat timeout
 * (`TemporalOptions.heartbeatTimeout`; local activities have none): every third of the timeout, from a timer thread of
 * this worker, whatever the body does. So Temporal runs the attempt again on another worker once the heartbeats stop
 * (the worker died) for a heartbeat timeout, not after the whole start-to-close timeout. When Temporal answers a
 * heartbeat that the attempt was cancelled (a node timeout, the run cancelled), the body is cancelled as a local run
 * cancels it (`docs/semantics.md` §7). [enabled] false sends none (a worker that cannot reach the server: tests).
 */
internal class Heartbeats(private val enabled: Boolean = true) {
    private val timer: ScheduledExecutorService by lazy {
        Executors.newSingleThreadScheduledExecutor { task ->
            Thread(task, "trellis-heartbeats").apply { isDaemon = true }
        }
    }

    /** Runs [body] to its end on this thread, heartbeating meanwhile when the activity asks for heartbeats. */
    fun <T> around(body: suspend CoroutineScope.() -> T): T {
        val context = Activity.getExecutionContext()
        val timeout = context.info.heartbeatTimeout
        if (!enabled || context.info.isLocal || timeout.isZero) return runBlocking(block = body)
        return runBlocking {
            val job = coroutineContext[Job]!!
            val every = (timeout.toMillis() / 3).coerceAtLeast(1)
            val beat = timer.scheduleAtFixedRate(
                {
                    try {
                        context.heartbeat<Any?>(null)
                    } catch (e: ActivityCompletionException) {
                        // Cancelled by the workflow, timed out or its workflow gone: nothing waits for the body.
                        job.cancel("The attempt's activity ended: ${e.message}")
                    } catch (e: Exception) {
                        // A heartbeat that did not reach the server: the next one tries again.
                    }
                },
                0,
                every,
                TimeUnit.MILLISECONDS,
            )
            try {
                body()
            } finally {
                beat.cancel(false)
            }
        }
    }
}
