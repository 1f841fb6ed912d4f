package dev.trellis.springboot

import dev.trellis.runtime.RunControl
import org.springframework.context.SmartLifecycle
import java.time.Duration

/**
 * The graceful drain on shutdown: when the application context stops, the runs that use [control] are drained —
 * they start no new node, let running ones finish, save a checkpoint and end `INTERRUPTED`, ready to be resumed —
 * and the shutdown waits up to [timeout] for them. It stops before the web server's graceful shutdown (a higher
 * phase), so that requests waiting for runs get their results instead of holding the shutdown up, and long before
 * the `DataSource` closes (beans are destroyed after every lifecycle stopped), so checkpoints can still be written.
 * A run started after the drain began (a request that came in meanwhile) is drained at once.
 */
internal class Drain(private val control: RunControl, private val timeout: Duration) : SmartLifecycle {
    @Volatile
    private var running = false

    /** Whether the last drain ended every run in time. */
    @Volatile
    var drainedAll: Boolean? = null
        private set

    override fun start() {
        running = true
    }

    override fun stop() {
        control.drain()
        drainedAll = control.awaitIdle(timeout.toMillis())
        running = false
    }

    override fun isRunning(): Boolean = running

    override fun getPhase(): Int = Int.MAX_VALUE - 512
}
