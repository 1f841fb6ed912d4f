package dev.trellis.runtime.internal.events

import dev.trellis.runtime.RunEvent
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.suspendCancellableCoroutine
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.atomic.AtomicReference
import java.util.concurrent.atomic.AtomicReferenceArray
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import kotlin.coroutines.Continuation
import kotlin.coroutines.resume
import kotlin.coroutines.suspendCoroutine

/** How many events a run may produce ahead of a slow collector before its producers wait for room. */
internal const val EVENT_BUFFER = 64

/**
 * The events of one run — its child runs' included — on their way to the run's one reader, in the order of their
 * [RunEvent.sequence]: the one ordering point of the run's events (`docs/semantics.md` §8).
 *
 * A producer [add]s an event by claiming the next sequence number (one atomic increment), building the event with
 * it, and writing it into the slot of that number: the event is immutable and built once, and the reader reads the
 * slots in sequence order, so the delivery order is the sequence order whatever the threads. Claiming and writing do
 * not suspend (no cancellation can come between them), so a claimed number is always filled: the reader never waits
 * for a lost event. No lock: producers only increment the counter and write their own slot, the reader only reads.
 *
 * Backpressure: a producer that may suspend first waits for room ([awaitRoom]), until fewer than [EVENT_BUFFER]
 * events are unread; the driver, which adds its events where it cannot suspend, waits at its next suspension point
 * ([Outbox.flush]). So the log holds at most [EVENT_BUFFER] unread events plus what producers add between two of
 * their waits (the events of one step of the driver, one event per other producer).
 *
 * The slots are chunks of [CHUNK] linked in sequence order, made by the first producer that needs one; the reader
 * drops a chunk once it has read it.
 */
internal class EventLog {
    /** The next sequence number to claim. */
    private val claimed = AtomicLong()

    /** The next sequence number the reader reads, as last published by the reader (it may lag [next]). */
    @Volatile private var consumed = 0L

    /** The chunk holding the reader's next slot: no unread event is in an older chunk. */
    @Volatile private var head = Chunk(0)

    /** A recent chunk, where producers start looking for theirs. */
    @Volatile private var tail = head

    /** The reader's next sequence number (the reader's alone). */
    private var next = 0L

    /** The reader when it waits for an event. */
    private val reader = AtomicReference<Continuation<Unit>?>()

    /** The producers waiting for room, newest first. */
    private val waiters = AtomicReference<RoomWaiter?>()

    /** Set once every producer is done: no event will be added. */
    @Volatile private var closed = false

    /** Set when the reader stopped reading: events are no longer kept, and nobody waits for room any more. */
    @Volatile var cancelled = false
        private set

    /** Whether the producers should wait for room before adding more. */
    val full: Boolean get() = claimed.get() - consumed >= EVENT_BUFFER && !cancelled

    /**
     * Adds the event [build] makes with its sequence number. Never suspends; the caller waits for room before or after
     * (see the class comment).
     */
    inline fun add(build: (sequence: Long) -> RunEvent) {
        val sequence = claim()
        val event = try {
            build(sequence)
        } catch (e: Throwable) {
            skip(sequence)
            throw e
        }
        publish(sequence, event)
    }

    /** Fills a claimed slot whose event could not be built: the reader must not wait for it forever. */
    fun skip(sequence: Long) = publish(sequence, SKIPPED)

    fun claim(): Long = claimed.getAndIncrement()

    fun publish(sequence: Long, event: Any) {
        var chunk = tail
        if (chunk.base > sequence) chunk = head
        while (sequence >= chunk.base + CHUNK) chunk = chunk.next ?: chunk.append()
        if (chunk.base > tail.base) tail = chunk
        chunk.set((sequence - chunk.base).toInt(), event)
        if (reader.get() != null) wakeReader()
    }

    private fun wakeReader() {
        val waiting = reader.getAndSet(null) ?: return
        waiting.resume(Unit)
    }

    /** The reader's next event, or null when it is not there yet. */
    fun poll(): RunEvent? {
        while (true) {
            var chunk = head
            var index = (next - chunk.base).toInt()
            if (index == CHUNK) {
                chunk = chunk.next ?: return null
                head = chunk
                index = 0
            }
            val event = chunk.get(index) ?: return null
            next++
            if (index and PUBLISH_EVERY == PUBLISH_EVERY || waiters.get() != null) release()
            if (event !== SKIPPED) return event as RunEvent
        }
    }

    /** Publishes how far the reader read, and wakes the producers waiting for room. */
    private fun release() {
        consumed = next
        if (waiters.get() == null) return
        var waiter = waiters.getAndSet(null)
        while (waiter != null) {
            waiter.wake()
            waiter = waiter.next
        }
    }

    /**
     * Waits until the reader's next event is there (true) or until no event will come any more (false). Cancellable:
     * the reader's cancellation is how a collector stops.
     */
    suspend fun awaitEvent(): Boolean {
        release()
        while (true) {
            if (ready()) return true
            if (closed) return ready()
            suspendCancellableCoroutine { waiting ->
                reader.set(waiting)
                // A producer that added its event before we were there to see it did not wake us: look again.
                if ((ready() || closed) && reader.compareAndSet(waiting, null)) waiting.resume(Unit)
            }
        }
    }

    private fun ready(): Boolean {
        val chunk = head
        val index = (next - chunk.base).toInt()
        return if (index == CHUNK) chunk.next?.get(0) != null else chunk.get(index) != null
    }

    /**
     * Waits until the log has room (see the class comment). When [cancellable], the caller's cancellation ends the
     * wait (a node's own events); otherwise only the reader's reading or stopping ends it (the run's own events, which
     * must reach a slow reader even while the run is being cancelled).
     */
    suspend fun awaitRoom(cancellable: Boolean) {
        while (full) {
            if (cancellable) {
                suspendCancellableCoroutine { waiting -> park(RoomWaiter(waiting)) }
            } else {
                suspendCoroutine { waiting -> park(RoomWaiter(waiting)) }
            }
        }
    }

    private fun park(waiter: RoomWaiter) {
        while (true) {
            val first = waiters.get()
            waiter.next = first
            if (waiters.compareAndSet(first, waiter)) break
        }
        // The reader may have read everything before it saw us: look again.
        if (!full) waiter.wake()
    }

    /** Called once every producer is done: the reader reads what is left, then ends. */
    fun close() {
        closed = true
        wakeReader()
    }

    /** Called when the reader stops reading: nobody waits for room any more. */
    fun cancel() {
        cancelled = true
        consumed = Long.MAX_VALUE / 2
        release()
    }

    /** Throws when the reader stopped reading, for producers that must not go on as if their events were read. */
    fun checkReader() {
        if (cancelled) throw CancellationException("The reader of the run's events stopped reading")
    }

    private class Chunk(
        @JvmField val base: Long,
    ) : AtomicReferenceArray<Any?>(CHUNK) {
        @Volatile @JvmField
        var next: Chunk? = null

        fun append(): Chunk {
            val made = Chunk(base + CHUNK)
            return if (NEXT.compareAndSet(this, null, made)) made else next!!
        }
    }

    /** A producer waiting for room; [wake] resumes it once, whoever calls it first. */
    private class RoomWaiter(private val waiting: Continuation<Unit>) : AtomicBoolean() {
        @JvmField var next: RoomWaiter? = null

        fun wake() {
            if (compareAndSet(false, true)) waiting.resume(Unit)
        }
    }

    private companion object {
        const val CHUNK = 64

        /** The reader publishes how far it read every 16 events (and whenever a producer waits). */
        const val PUBLISH_EVERY = 15

        /** What fills a claimed slot whose event could not be built. */
        val SKIPPED = Any()

        val NEXT: AtomicReferenceFieldUpdater<Chunk, Chunk> =
            AtomicReferenceFieldUpdater.newUpdater(Chunk::class.java, Chunk::class.java, "next")
    }
}
