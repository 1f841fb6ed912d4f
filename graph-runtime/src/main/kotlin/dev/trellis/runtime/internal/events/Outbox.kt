package dev.trellis.runtime.internal.events

import dev.trellis.runtime.RunEvent

/**
 * The events of one run (or child run) on their way to the run's [EventLog] ([log]; null when nobody collects them,
 * and then no event is even built). Every event is built once, with its sequence number, by the one who adds it to
 * the log (see [EventLog]); this class only says when producers wait for room.
 *
 * The driver [post]s the events of its steps where it cannot suspend, and waits for room at its suspension points
 * ([flush]: before any node starts and before it waits). A node's own events (custom, retrying, cache, a map task's
 * start) wait for room first, cancellably ([nodeSend]); the run's own events ([send]) wait without being cancellable,
 * so that a cancelled run still reports its end to a slow reader.
 */
internal class Outbox(
    @JvmField val log: EventLog?,
) {
    /** Whether events are collected: when not, callers skip the work of describing them. */
    val enabled: Boolean get() = log != null

    /**
     * Set while reporting a cancelled run (in `NonCancellable`): events still wait for a slow reader, so none is
     * dropped; once the reader stopped reading, they are discarded instead of failing the report.
     */
    var draining = false

    /** Adds an event of the driver, without waiting: the driver waits for room at its next [flush]. */
    inline fun post(event: (sequence: Long) -> RunEvent) {
        log?.add(event)
    }

    /** Whether [flush] would wait for the reader now. */
    val full: Boolean get() = log?.full == true

    /** Waits while the reader is [EVENT_BUFFER] events behind (backpressure), not cancellably. */
    suspend inline fun flush() {
        val log = log ?: return
        if (log.full) log.awaitRoom(cancellable = false)
        if (log.cancelled && !draining) log.checkReader()
    }

    /** Adds an event from a node's coroutine (not the driver's), waiting for room first, cancellably. */
    suspend inline fun nodeSend(event: (sequence: Long) -> RunEvent) {
        val log = log ?: return
        if (log.full) log.awaitRoom(cancellable = true)
        log.checkReader()
        log.add(event)
    }

    /** Adds one of the run's own events (started, ended, compensations, a map task's end), waiting for room first. */
    suspend inline fun send(event: (sequence: Long) -> RunEvent) {
        val log = log ?: return
        flush()
        log.add(event)
    }
}
