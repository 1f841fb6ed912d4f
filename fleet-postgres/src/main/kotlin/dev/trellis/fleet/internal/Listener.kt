package dev.trellis.fleet.internal

import org.postgresql.PGConnection
import java.sql.Connection
import java.sql.SQLException
import javax.sql.DataSource

/**
 * `LISTEN`s on [channel] on a connection of its own, on a daemon thread, and hands every notification's payload to
 * [onPayload]. When the connection breaks it reconnects after [retryMillis] and calls [onPayload] with null (something
 * may have been missed: callers then look at the table, as they do on their polling fallback).
 */
internal class Listener(
    private val dataSource: DataSource,
    private val channel: String,
    private val retryMillis: Long,
    private val onProblem: (Throwable) -> Unit,
    private val onPayload: (String?) -> Unit,
) {
    @Volatile
    private var running = true

    @Volatile
    private var connection: Connection? = null

    private val thread = Thread(::loop, "trellis-fleet-listen").apply { isDaemon = true }

    fun start() {
        thread.start()
    }

    private fun loop() {
        while (running) {
            try {
                dataSource.connection.use { c ->
                    connection = c
                    c.autoCommit = true
                    c.createStatement().use { it.execute("LISTEN \"$channel\"") }
                    onPayload(null)
                    val pg = c.unwrap(PGConnection::class.java)
                    while (running) {
                        val notifications = pg.getNotifications(POLL_MILLIS) ?: continue
                        for (n in notifications) onPayload(n.parameter)
                    }
                }
            } catch (e: SQLException) {
                if (!running) return
                onProblem(e)
                try {
                    Thread.sleep(retryMillis) // back off before reconnecting; the polling fallback covers the gap
                } catch (_: InterruptedException) {
                    return
                }
            } finally {
                connection = null
            }
        }
    }

    fun stop() {
        running = false
        thread.interrupt()
        thread.join(STOP_WAIT_MILLIS)
    }

    private companion object {
        const val POLL_MILLIS = 500
        const val STOP_WAIT_MILLIS = 2_000L
    }
}
