package dev.trellis.runtime.internal

import dev.trellis.runtime.RunEvent
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.channels.ClosedSendChannelException
import kotlinx.coroutines.channels.SendChannel
import kotlinx.coroutines.withContext

/**
 * The events of one run on their way to its collector ([events]; null when nobody collects them, and then no
 * event is even built). The driver [post]s the events of its steps and [flush]es them before any node starts and
 * before it waits, so a node's own events (custom, retrying), sent straight to the channel with [nodeSend], always
 * come after its NodeStarted. The run's own events ([send]) flush what is queued first.
 */
internal class Outbox(
    @JvmField val events: SendChannel<RunEvent>?,
) {
    /** Whether events are collected: when not, callers skip the work of describing them. */
    val enabled: Boolean get() = events != null

    /**
     * Set while reporting a cancelled run (in [NonCancellable]): events still wait for a slow reader, so none
     * is dropped; a reader that stopped reading cancels the channel, and the events are then discarded.
     */
    var draining = false

    /** Events the driver produced and has not handed to the collector yet; see [flush]. */
    @JvmField val pending = ArrayDeque<RunEvent>(0)

    /**
     * Queues an event of the driver. The driver [flush]es before any node starts and before it waits, so a node's
     * own events (custom, retrying) always come after its NodeStarted.
     */
    inline fun post(event: () -> RunEvent) {
        if (events != null) pending.addLast(event())
    }

    /** Hands the queued events to the collector, suspending while it is slow (backpressure). */
    suspend inline fun flush() {
        if (pending.isNotEmpty()) flushPending()
    }

    suspend fun flushPending() {
        val channel = events ?: return
        while (pending.isNotEmpty()) {
            deliver(channel, pending.removeFirst())
        }
    }

    /**
     * Sends one of the run's own events. A send cancelled while suspended may or may not have delivered its event,
     * so the run's events are sent non-cancellably: a run timeout, the run's cancellation or a fail-fast
     * cancellation of the coroutine that drives the scheduler never loses or repeats one. They still wait for a slow
     * reader (backpressure); a reader that stopped reading cancels the channel, which ends the wait.
     */
    suspend fun deliver(channel: SendChannel<RunEvent>, event: RunEvent) {
        if (channel.trySend(event).isSuccess) return
        try {
            withContext(NonCancellable) { channel.send(event) }
        } catch (e: ClosedSendChannelException) {
            if (!draining) throw e // The reader is gone.
        } catch (e: CancellationException) {
            // The reader cancelled the channel; the run's own cancellation is rethrown by execute().
            if (!draining) throw e
        }
    }

    /** Sends an event from a node's coroutine (not the driver's): straight to the channel. */
    suspend inline fun nodeSend(event: () -> RunEvent) {
        events?.send(event())
    }

    /** Sends one of the run's own events (started, ended), after the queued ones. */
    suspend inline fun send(event: () -> RunEvent) {
        val channel = events ?: return
        flush()
        deliver(channel, event())
    }
}
