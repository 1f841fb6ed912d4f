package dev.trellis.temporal.internal

import kotlinx.coroutines.flow.MutableStateFlow
import org.postgresql.PGConnection
import java.sql.SQLException
import java.util.concurrent.ConcurrentHashMap
import javax.sql.DataSource

/**
 * The `LISTEN` side of `PostgresLiveEvents`: one connection of its own, on a daemon thread started with the first
 * subscriber, listening on the table's channel; each notification (a run id) bumps the signal of that run's
 * subscribers ([watch]), who then read the table. When the connection breaks it reconnects and bumps every signal
 * (a notification may have been missed); the subscribers' polling covers the gap in between.
 */
internal class LiveListener(private val dataSource: DataSource, private val channel: String) {
    private class Watch {
        val signal = MutableStateFlow(0L)
        var subscribers = 0
    }

    private val watches = ConcurrentHashMap<String, Watch>()

    @Volatile
    private var running = true
    private var thread: Thread? = null

    /** The signal of run [runId], bumped on each notification about it; [unwatch] it when done. */
    fun watch(runId: String): MutableStateFlow<Long> {
        startOnce()
        return watches.compute(runId) { _, w -> (w ?: Watch()).also { it.subscribers++ } }!!.signal
    }

    fun unwatch(runId: String) {
        watches.computeIfPresent(runId) { _, w -> w.also { it.subscribers-- }.takeIf { it.subscribers > 0 } }
    }

    @Synchronized
    private fun startOnce() {
        if (thread != null || !running) return
        thread = Thread(::loop, "trellis-live-events-listen").apply {
            isDaemon = true
            start()
        }
    }

    private fun bump(runId: String?) {
        if (runId == null) {
            for (w in watches.values) w.signal.value++
        } else {
            watches[runId]?.signal?.let { it.value++ }
        }
    }

    private fun loop() {
        while (running) {
            try {
                dataSource.connection.use { c ->
                    c.autoCommit = true
                    c.createStatement().use { it.execute("LISTEN \"$channel\"") }
                    bump(null)
                    val pg = c.unwrap(PGConnection::class.java)
                    while (running) {
                        val notifications = pg.getNotifications(POLL_MILLIS) ?: continue
                        for (n in notifications) bump(n.parameter)
                    }
                }
            } catch (e: SQLException) {
                if (!running) return
                try {
                    Thread.sleep(RETRY_MILLIS) // the subscribers' polling covers the gap
                } catch (_: InterruptedException) {
                    return
                }
            }
        }
    }

    fun close() {
        running = false
        val t = synchronized(this) { thread } ?: return
        t.interrupt()
        t.join(STOP_WAIT_MILLIS)
    }

    private companion object {
        const val POLL_MILLIS = 500
        const val RETRY_MILLIS = 1_000L
        const val STOP_WAIT_MILLIS = 2_000L
    }
}
