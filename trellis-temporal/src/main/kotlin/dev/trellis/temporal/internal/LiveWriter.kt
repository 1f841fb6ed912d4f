package dev.trellis.temporal.internal

import dev.trellis.temporal.LiveEvent
import java.time.Duration
import java.util.concurrent.ArrayBlockingQueue
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.locks.ReentrantLock
import javax.sql.DataSource
import kotlin.concurrent.withLock

/**
 * The background writer of `PostgresLiveEvents`: [offer] hands an event over without blocking (workflow code calls
 * it) into a queue of [capacity] events, and one daemon thread writes them to the [table] in batches, in the order
 * they were offered, retrying a batch the database refused until it is written or the writer is closed. An event
 * offered to a full queue is dropped and counted ([dropped]). The thread also prunes the table of ended runs, at most
 * once per [pruneEvery].
 */
internal class LiveWriter(
    private val dataSource: DataSource,
    private val table: LiveTable,
    capacity: Int,
    private val retention: Duration,
    private val pruneEvery: Duration,
) {
    private val queue = ArrayBlockingQueue<LiveEvent>(capacity)
    private val lock = ReentrantLock()
    private val written = lock.newCondition()

    /** How many events were queued, and how many of them are done with (written, or dropped as unwritable). */
    private val offered = AtomicLong()
    private var done = 0L

    @Volatile
    private var running = true
    val dropped = AtomicLong()
    private var lastPrune = System.nanoTime()
    private val thread = Thread(::loop, "trellis-live-events-writer").apply { isDaemon = true }

    fun start() {
        thread.start()
    }

    /** Queues [event]; false when the queue was full (the event is dropped). Never blocks, never throws. */
    fun offer(event: LiveEvent): Boolean {
        if (queue.offer(event)) {
            offered.incrementAndGet()
            return true
        }
        dropped.incrementAndGet()
        return false
    }

    /** Waits until every event offered before the call is written, at most [timeout]; false when time ran out. */
    fun flush(timeout: Duration): Boolean {
        val deadline = System.nanoTime() + timeout.toNanos()
        val target = offered.get()
        lock.withLock {
            while (done < target) {
                val left = deadline - System.nanoTime()
                if (left <= 0 || !thread.isAlive) return false
                written.awaitNanos(minOf(left, POLL_MILLIS * 1_000_000))
            }
        }
        return true
    }

    fun close(timeout: Duration) {
        flush(timeout)
        running = false
        thread.interrupt()
        thread.join(STOP_WAIT_MILLIS)
    }

    private fun loop() {
        val batch = ArrayList<LiveEvent>(BATCH)
        var pause = FIRST_RETRY_MILLIS
        while (running) {
            try {
                if (batch.isEmpty()) {
                    val first = queue.poll(POLL_MILLIS, TimeUnit.MILLISECONDS)
                    if (first != null) {
                        batch += first
                        queue.drainTo(batch, BATCH - 1)
                    }
                }
                if (batch.isNotEmpty()) {
                    write(batch)
                    lock.withLock {
                        done += batch.size
                        written.signalAll()
                    }
                    batch.clear()
                }
                pause = FIRST_RETRY_MILLIS
                pruneIfDue()
            } catch (e: InterruptedException) {
                if (!running) return
            } catch (e: Exception) {
                // The database refused or is away (or a driver failed): the batch is kept and written again after a
                // pause; the thread goes on, so that publishing never stops.
                LOG.log(System.Logger.Level.WARNING, "Could not write live events to ${table.name}; retrying", e)
                try {
                    Thread.sleep(pause)
                } catch (_: InterruptedException) {
                    if (!running) return
                }
                pause = (pause * 2).coerceAtMost(LAST_RETRY_MILLIS)
            }
        }
    }

    private fun write(batch: List<LiveEvent>) {
        val byRun = LinkedHashMap<String, MutableList<Pair<LiveEvent, String>>>()
        for (event in batch) {
            val json = try {
                LiveTable.encode(event)
            } catch (e: RuntimeException) {
                // An event the codec cannot write (a state value its key's serializer refuses) is not published.
                LOG.log(System.Logger.Level.WARNING, "Could not encode live event ${event.key}; dropped", e)
                dropped.incrementAndGet()
                continue
            }
            byRun.getOrPut(event.key.runId) { ArrayList() } += event to json
        }
        dataSource.connection.use { c ->
            // One transaction per run, in order: a run's advisory lock is held only while its rows are inserted.
            for ((runId, events) in byRun) table.insert(c, runId, events)
        }
    }

    private fun pruneIfDue() {
        if (System.nanoTime() - lastPrune < pruneEvery.toNanos()) return
        lastPrune = System.nanoTime()
        dataSource.connection.use { table.prune(it, retention) }
    }

    private companion object {
        val LOG: System.Logger = System.getLogger("dev.trellis.temporal.PostgresLiveEvents")
        const val BATCH = 256
        const val POLL_MILLIS = 200L
        const val FIRST_RETRY_MILLIS = 100L
        const val LAST_RETRY_MILLIS = 5_000L
        const val STOP_WAIT_MILLIS = 2_000L
    }
}
